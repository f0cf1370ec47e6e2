package dev.delayedtasks.dashboard;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.dashboard.DashboardTestApplications.Letter;
import dev.delayedtasks.dashboard.DashboardTestApplications.Run;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.internal.worker.HandlerContainerFactory;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dashboard's page in a real headless Chromium against a real application with real
 * handlers on a real Redis, payloads shown: the overview lists the queues with their
 * counts; a queue shows its scheduled tasks and its dead letters grouped; the header form
 * finds a task, also one whose id is {@code ..}; a writer redrives a dead letter, pauses
 * a queue (after confirming), redrives a whole dead-letter group of more than one step's
 * worth with "Redrive all" (after confirming), and mends a dead letter's payload and
 * redrives it, and Redis and the handlers show it; a reader sees no write control (and no
 * payload editor) on any page; task data made of HTML is shown as text; the page requests
 * nothing outside the application. Screenshots go to
 * {@code target/dashboard-screenshots}.
 */
@WithRedis
class DashboardBrowserIntegrationTests {

	private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

	private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

	private static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final JsonMapper json = JsonMapper.builder().build();

	/** Its handler always fails, for good: three dead letters. */
	private static final String FAILING = "b-failing";

	/** Scheduled tasks, none due for half an hour. */
	private static final String LATER = "b-later";

	/** Its handler fails the first run of each task only. */
	private static final String REDRIVE = "b-redrive";

	private static final String PAUSE = "b-pause";

	/** Its handler fails the first run of each task: two groups of dead letters. */
	private static final String GROUPS = "b-groups";

	/** Its handler refuses every run, for good. */
	private static final String REFUSED = "b-refused";

	/** No handler: 25 tasks scheduled an hour away and more, paged. */
	private static final String PAGED = "b-paged";

	/** No handler: a task whose id is {@code ..}. */
	private static final String FIND = "b-find";

	private static String missing;

	private static ConfigurableApplicationContext app;

	private static ChromeDriver driver;

	private static String origin;

	private static List<TaskId> dead;

	private static List<TaskId> later;

	@BeforeAll
	static void start(TestRedis redis) throws Exception {
		missing = Stream.of(CHROMIUM, CHROMEDRIVER)
			.filter((binary) -> !Files.isExecutable(binary))
			.map(Path::toString)
			.collect(Collectors.joining(" and "));
		if (!missing.isEmpty()) {
			return;
		}
		app = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class, BrowsedHandlers.class },
				"--test.application-chain=deny-all", "--delayed-tasks.dashboard.show-payloads=true",
				"--delayed-tasks.queues." + GROUPS + ".concurrency=4");
		origin = "http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort();
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		dead = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			dead.add(scheduler.enqueue(FAILING, "doomed " + i));
		}
		later = new ArrayList<>();
		later.add(scheduler.schedule(LATER, "in half an hour", Duration.ofMinutes(30)));
		for (int i = 0; i < 3; i++) {
			later.add(scheduler.schedule(LATER, "in 90 minutes " + i, Duration.ofMinutes(90)));
		}
		scheduler.schedule(PAUSE, "later", Duration.ofHours(2));
		scheduler.schedule(TaskRequest.of(FIND, "dots").id("..").delay(Duration.ofHours(2)));
		for (TaskId id : dead) {
			awaitState(FAILING, id, TaskState.DEAD);
		}
		ChromeOptions options = new ChromeOptions();
		// Both paths given: Selenium Manager is skipped and nothing is downloaded.
		options.setBinary(CHROMIUM.toFile());
		options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
				"--window-size=1400,1000", "--no-first-run", "--disable-background-networking",
				"--disable-component-update", "--disable-default-apps", "--disable-sync");
		ChromeDriverService service = new ChromeDriverService.Builder()
			.usingDriverExecutable(new File(CHROMEDRIVER.toString()))
			.usingAnyFreePort()
			.build();
		driver = new ChromeDriver(service, options);
		driver.manage().timeouts().scriptTimeout(WAIT);
		driver.executeCdpCommand("Network.enable", Map.of());
		Files.createDirectories(SCREENSHOTS);
	}

	@AfterAll
	static void stop() {
		if (driver != null) {
			driver.quit();
		}
		if (app != null) {
			app.close();
		}
	}

	@BeforeEach
	void browserIsInstalled() {
		assumeTrue(missing.isEmpty(), () -> "Chromium and chromium-driver are not installed (no " + missing
				+ "): apt-get install chromium chromium-driver");
	}

	@Test
	void theOverviewListsTheQueuesWithTheirCountsAndAQueueShowsItsTasksAndDeadLetters() throws Exception {
		logIn("reader");
		WebElement failing = waitFor(By.cssSelector("#queues tr[data-queue='" + FAILING + "']"));
		// Per minute (created / succeeded / failed) comes from the history the handlers
		// record: its value depends on
		// when the last sample was taken.
		assertThat(cells(failing).subList(0, 5)).containsExactly(FAILING, "0", "0", "0", "3");
		assertThat(cells(failing).get(5)).matches("[0-9.]+ / [0-9.]+ / [0-9.]+");
		// Lateness p50 / p99 of the last 5 minutes, to a bucket's bound, or none yet.
		assertThat(cells(failing).get(6)).matches("(≤ [0-9.]+ m?s|—) / (≤ [0-9.]+ m?s|—)");
		assertThat(cells(failing).subList(7, 10)).containsExactly("0", "0", "0");
		List<String> laterCells = cells(waitFor(By.cssSelector("#queues tr[data-queue='" + LATER + "']")));
		assertThat(laterCells.subList(0, 5)).containsExactly(LATER, "4", "0", "0", "0");
		assertThat(laterCells.subList(7, 10)).containsExactly("0", "1", "4");
		assertThat(driver.findElement(By.id("user")).getText()).isEqualTo("reader (read-only)");
		screenshot("overview");

		click(By.cssSelector("a[data-queue-link='" + LATER + "']"));
		waitForText(By.id("queue-name"), LATER);
		List<String> scheduled = texts(By.cssSelector("#scheduled tbody tr td:first-child"));
		assertThat(scheduled).containsExactlyInAnyOrderElementsOf(later.stream().map(TaskId::value).toList())
			.first()
			.as("the earliest first")
			.isEqualTo(later.get(0).value());
		assertThat(driver.getCurrentUrl()).endsWith("/delayed-tasks/#/queues/" + LATER);

		driver.navigate().back();
		waitFor(By.cssSelector("#queues tr[data-queue='" + FAILING + "']"));
		click(By.cssSelector("a[data-queue-link='" + FAILING + "']"));
		waitForText(By.id("queue-name"), FAILING);
		List<String> captions = driver.findElements(By.cssSelector(".charts figure figcaption"))
			.stream()
			.map(WebElement::getText)
			.toList();
		assertThat(captions).hasSize(5);
		assertThat(captions.subList(0, 3))
			.allSatisfy((caption) -> assertThat(caption).contains("created", "succeeded", "failed"));
		assertThat(captions.subList(3, 5))
			.allSatisfy((caption) -> assertThat(caption).contains("Lateness", "p50", "p99"));
		List<WebElement> groups = driver.findElements(By.cssSelector("#dead-groups tbody tr"));
		assertThat(groups).hasSize(1);
		assertThat(cells(groups.get(0))).startsWith("non-retryable", NonRetryableTaskException.class.getName(), "3");
		assertThat(texts(By.cssSelector("#dead-letters tbody tr td:first-child")))
			.containsExactlyInAnyOrderElementsOf(dead.stream().map(TaskId::value).toList());
		screenshot("queue");
		assertOnlyRequestsToTheApplication();
	}

	@Test
	void theHeaderFormFindsATaskEvenOneWhoseIdIsDots() throws Exception {
		logIn("reader");
		waitFor(By.cssSelector("#queues tr[data-queue='" + LATER + "']"));
		find(LATER, later.get(0));
		assertThat(driver.findElement(By.cssSelector("dd[data-field='state']")).getText()).isEqualTo("SCHEDULED");
		screenshot("task");
		find(FAILING, dead.get(0));
		assertThat(driver.findElement(By.cssSelector("dd[data-field='state']")).getText()).isEqualTo("DEAD");
		assertThat(driver.findElement(By.cssSelector("dd[data-field='last error']")).getText())
			.contains("always refused");
		// Payloads are shown, read-only to the reader.
		waitForText(By.id("payload"), "\"doomed 0\"");
		assertThat(driver.findElements(By.id("payload-editor"))).isEmpty();
		find(FIND, TaskId.of(".."));
		assertThat(driver.findElement(By.cssSelector("dd[data-field='state']")).getText()).isEqualTo("SCHEDULED");
		assertThat(driver.getCurrentUrl()).endsWith("#/queues/" + FIND + "/tasks/..");
		find(LATER, TaskId.of("no-such-task"));
		waitForText(By.cssSelector("#view h1"), "No task no-such-task in " + LATER);
		assertOnlyRequestsToTheApplication();
	}

	@Test
	void aWriterRedrivesADeadLetterWithoutConfirming() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		BrowsedHandlers handlers = app.getBean(BrowsedHandlers.class);
		TaskId id = scheduler.enqueue(REDRIVE, "fails once");
		awaitState(REDRIVE, id, TaskState.DEAD);
		logIn("writer");
		show("#/queues/" + REDRIVE);
		assertThat(driver.findElement(By.id("user")).getText()).isEqualTo("writer");
		click(By.cssSelector("#dead-letters tr[data-dead='" + id + "'] button[data-action='redrive']"));
		waitForText(By.id("status"), "redrive: done (1)");
		await().atMost(WAIT).until(() -> handlers.runs(REDRIVE, id) == 2);
		await().atMost(WAIT).until(() -> scheduler.find(REDRIVE, id).isEmpty());
		assertThat(app.getBean(DeadLetters.class).count(REDRIVE)).isZero();
		assertOnlyRequestsToTheApplication();
	}

	@Test
	void aWriterPausesAQueueAfterConfirming() throws Exception {
		QueueControl control = app.getBean(QueueControl.class);
		logIn("writer");
		show("#/queues/" + PAUSE);
		click(By.cssSelector("button[data-action='pause']"));
		Alert confirm = new WebDriverWait(driver, WAIT).until(ExpectedConditions.alertIsPresent());
		assertThat(confirm.getText()).isEqualTo("Pause " + PAUSE + " on every instance?");
		assertThat(control.isPaused(PAUSE)).as("not before it is confirmed").isFalse();
		confirm.accept();
		await().atMost(WAIT).until(() -> control.isPaused(PAUSE));
		waitFor(By.cssSelector("button[data-action='resume']"));
		assertThat(driver.findElement(By.cssSelector("#view h1 .pill.paused")).getText()).isEqualTo("paused");
		screenshot("paused");
		assertOnlyRequestsToTheApplication();
	}

	/**
	 * A queue's scheduled tasks are paged 20 at a time; a task page shows its headers.
	 */
	@Test
	void scheduledTasksArePagedAndATaskShowsItsHeaders() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		List<TaskId> paged = new ArrayList<>();
		for (int i = 0; i < 25; i++) {
			paged.add(scheduler.schedule(
					TaskRequest.of(PAGED, "page " + i).header("tenant", "acme").delay(Duration.ofMinutes(60 + i))));
		}
		logIn("reader");
		show("#/queues/" + PAGED);
		waitForText(By.cssSelector("#scheduled + p"), "1–20 of 25. next →");
		assertThat(texts(By.cssSelector("#scheduled tbody tr td:first-child"))).hasSize(20)
			.first()
			.isEqualTo(paged.get(0).value());
		click(By.cssSelector("button[data-page='scheduled-next']"));
		waitForText(By.cssSelector("#scheduled + p"), "21–25 of 25. ← previous");
		assertThat(texts(By.cssSelector("#scheduled tbody tr td:first-child")))
			.containsExactlyElementsOf(paged.subList(20, 25).stream().map(TaskId::value).toList());
		show("#/queues/" + PAGED + "/tasks/" + paged.get(3));
		assertThat(waitFor(By.cssSelector("#headers")).getText()).contains("tenant", "acme");
		screenshot("task-headers");
		assertOnlyRequestsToTheApplication();
	}

	/**
	 * The schedules page lists a schedule with its ticks; "trigger" (after confirming)
	 * runs its handler once now and the page then shows the outcome; a reader sees the
	 * schedule without its controls; the instances page lists this application with its
	 * queues.
	 */
	@Test
	void aWriterTriggersAScheduleAndTheInstancesPageListsThisApplication() throws Exception {
		RecurringTasks recurring = app.getBean(RecurringTasks.class);
		Handlers handlers = app.getBean(Handlers.class);
		recurring.upsert(RecurringSchedule.fixedRate("b-yearly", "work", Duration.ofDays(365)).payload("yearly"));
		logIn("writer");
		show("#/schedules");
		By row = By.cssSelector("#schedules tr[data-schedule='b-yearly']");
		waitFor(row);
		assertThat(driver.findElement(row).findElement(By.cssSelector("td[data-field='last']")).getText())
			.isEqualTo("—");
		click(By.cssSelector("#schedules tr[data-schedule='b-yearly'] button[data-action='trigger']"));
		Alert confirm = new WebDriverWait(driver, WAIT).until(ExpectedConditions.alertIsPresent());
		assertThat(confirm.getText()).isEqualTo("Run b-yearly once now?");
		confirm.accept();
		await().atMost(WAIT)
			.until(() -> handlers.ran("work").stream().anyMatch((id) -> id.value().startsWith("b-yearly:")));
		await().atMost(WAIT).until(() -> "succeeded".equals(recurring.find("b-yearly").orElseThrow().lastOutcome()));
		show("#/schedules");
		waitForText(By.cssSelector("#schedules tr[data-schedule='b-yearly'] td[data-field='outcome']"), "succeeded");
		screenshot("schedules");
		logIn("reader");
		show("#/schedules");
		waitFor(row);
		assertThat(driver.findElements(By.cssSelector("#schedules button.write"))).isEmpty();
		show("#/instances");
		String instanceId = app.getBean(HandlerContainerFactory.class).instanceId();
		By instance = By.cssSelector("#instances tr[data-instance='" + instanceId + "']");
		waitFor(instance);
		assertThat(driver.findElement(instance).findElements(By.cssSelector("[data-handler]")))
			.extracting((element) -> element.getDomAttribute("data-handler"))
			.contains("work", FAILING, REDRIVE);
		screenshot("instances");
		recurring.remove("b-yearly");
		assertOnlyRequestsToTheApplication();
	}

	/**
	 * 105 dead letters of one group and 3 of another: "Redrive all" steps through more
	 * than one step's worth (100) and redrives exactly the group.
	 */
	@Test
	void aWriterRedrivesADeadLetterGroupWithRedriveAll() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		DeadLetters deadLetters = app.getBean(DeadLetters.class);
		BrowsedHandlers handlers = app.getBean(BrowsedHandlers.class);
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 108; i++) {
			requests.add(TaskRequest.of(GROUPS, (i % 36 == 35) ? "b" : "a").maxAttempts(1));
		}
		List<ScheduleResult> results = scheduler.scheduleAll(requests);
		List<TaskId> groupA = new ArrayList<>();
		List<TaskId> groupB = new ArrayList<>();
		for (int i = 0; i < requests.size(); i++) {
			List<TaskId> group = requests.get(i).payload().equals("a") ? groupA : groupB;
			group.add(results.get(i).id());
		}
		assertThat(groupA).hasSize(105);
		await().atMost(Duration.ofSeconds(30)).until(() -> deadLetters.count(GROUPS) == 108);

		logIn("writer");
		show("#/queues/" + GROUPS);
		By group = By.cssSelector("#dead-groups tr[data-group='" + IllegalStateException.class.getName() + "']");
		assertThat(cells(waitFor(group))).startsWith("retries-exhausted", IllegalStateException.class.getName(), "105");
		screenshot("group-before");
		click(By.cssSelector("#dead-groups tr[data-group='" + IllegalStateException.class.getName()
				+ "'] button[data-action='redrive-group']"));
		Alert confirm = new WebDriverWait(driver, WAIT).until(ExpectedConditions.alertIsPresent());
		assertThat(confirm.getText()).isEqualTo("redrive every dead letter of " + GROUPS + " with retries-exhausted / "
				+ IllegalStateException.class.getName() + "?");
		assertThat(deadLetters.count(GROUPS)).as("not before it is confirmed").isEqualTo(108);
		confirm.accept();
		waitForText(By.id("status"), "redrive: 105 done, 3 dead letters left");
		assertThat(deadLetters.list(GROUPS, 1000)).extracting(DeadLetter::id)
			.containsExactlyInAnyOrderElementsOf(groupB);
		await().atMost(WAIT).until(() -> groupA.stream().allMatch((id) -> handlers.runs(GROUPS, id) == 2));
		waitFor(By.cssSelector("#dead-groups tr[data-group='" + IllegalArgumentException.class.getName() + "']"));
		// The page shows the dead set after the action once its last read returns.
		new WebDriverWait(driver, WAIT).until(ExpectedConditions.numberOfElementsToBe(group, 0));
		screenshot("group-after");
		assertOnlyRequestsToTheApplication();
	}

	/**
	 * "Redrive all" on a group whose handler still refuses it: each dead letter is
	 * redriven once, dies again, and the page stops.
	 */
	@Test
	void redriveAllOfAGroupThatDiesAgainRedrivesEachOnceAndStops() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		BrowsedHandlers handlers = app.getBean(BrowsedHandlers.class);
		List<TaskId> ids = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			ids.add(scheduler.enqueue(REFUSED, "refused " + i));
		}
		await().atMost(WAIT).until(() -> app.getBean(DeadLetters.class).count(REFUSED) == 5);
		logIn("writer");
		show("#/queues/" + REFUSED);
		click(By.cssSelector("button[data-action='redrive-group']"));
		new WebDriverWait(driver, WAIT).until(ExpectedConditions.alertIsPresent()).accept();
		new WebDriverWait(driver, WAIT).until((WebDriver ignored) -> driver.findElement(By.id("status"))
			.getText()
			.matches("redrive: \\d+ done, \\d+ dead letters left"));
		assertThat(driver.findElement(By.id("status")).getText()).startsWith("redrive: 5 done, ");
		await().atMost(WAIT).until(() -> ids.stream().allMatch((id) -> handlers.runs(REFUSED, id) == 2));
		await().atMost(WAIT).until(() -> app.getBean(DeadLetters.class).count(REFUSED) == 5);
		assertThat(ids).allMatch((id) -> handlers.runs(REFUSED, id) == 2);
		assertOnlyRequestsToTheApplication();
	}

	@Test
	void aWriterMendsADeadLettersPayloadAndRedrivesIt() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		Handlers handlers = app.getBean(Handlers.class);
		TaskId id = scheduler.schedule(TaskRequest.of("mend", new Letter("", 1)).header("tenant", "acme"));
		awaitState("mend", id, TaskState.DEAD);
		logIn("writer");
		show("#/queues/mend/tasks/" + id);
		WebElement editor = waitFor(By.id("payload-editor"));
		assertThat(json.readTree(editor.getDomProperty("value")))
			.isEqualTo(json.readTree("{\"to\":\"\",\"copies\":1}"));
		editor.clear();
		editor.sendKeys("{\"to\": \"ann@example.com\", \"copies\": 2}");
		screenshot("edit-payload");
		click(By.cssSelector("button[data-action='redrive-edited']"));
		waitForText(By.id("status"), "redriven with the edited payload");
		await().atMost(WAIT).until(() -> handlers.runs("mend", id).size() == 2);
		Run run = handlers.runs("mend", id).get(1);
		assertThat(run.payload()).isEqualTo(new Letter("ann@example.com", 2));
		assertThat(run.headers()).containsEntry("tenant", "acme");
		await().atMost(WAIT).until(() -> scheduler.find("mend", id).isEmpty());
		assertThat(app.getBean(DeadLetters.class).list("mend", 100)).noneMatch((letter) -> letter.id().equals(id));
		assertOnlyRequestsToTheApplication();
	}

	@Test
	void aReaderSeesNoWriteControlOnAnyPageThatShowsThemToAWriter() throws Exception {
		List<String> pages = List.of("#/", "#/queues/" + FAILING, "#/queues/" + LATER,
				"#/queues/" + LATER + "/tasks/" + later.get(1), "#/queues/" + FAILING + "/tasks/" + dead.get(1));
		logIn("writer");
		for (String page : pages.subList(1, pages.size())) {
			show(page);
			assertThat(driver.findElements(By.cssSelector("button.write"))).as("the writer on " + page).isNotEmpty();
		}
		assertThat(driver.findElements(By.id("payload-editor"))).as("the writer on a dead letter").hasSize(1);
		logIn("reader");
		for (String page : pages) {
			show(page);
			assertThat(driver.findElements(By.cssSelector("button.write"))).as("the reader on " + page).isEmpty();
		}
		waitFor(By.id("payload"));
		assertThat(driver.findElements(By.id("payload-editor"))).as("the reader on a dead letter").isEmpty();
		screenshot("reader-task");
		assertOnlyRequestsToTheApplication();
	}

	@Test
	void taskDataMadeOfHtmlIsShownAsText() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		TaskId id = scheduler.enqueue("doomed", Handlers.HOSTILE);
		awaitState("doomed", id, TaskState.DEAD);
		logIn("writer");
		show("#/queues/doomed");
		waitFor(By.cssSelector("#dead-letters tbody tr"));
		assertThat(driver.findElement(By.id("dead-letters")).getText()).contains("<img src=x onerror=");
		assertThat(driver.findElement(By.id("dead-groups")).getText()).contains("<script>");
		assertThat(driver.findElements(By.cssSelector("#view img, #view script"))).isEmpty();
		show("#/queues/doomed/tasks/" + id);
		assertThat(driver.findElement(By.cssSelector("dd[data-field='last error']")).getText()).contains("<img src=x");
		assertThat(waitFor(By.id("payload-editor")).getDomProperty("value")).contains("<img src=x onerror=",
				"<script>window.__xss=2</script>");
		assertThat(driver.findElements(By.cssSelector("#view img, #view script"))).isEmpty();
		assertThat(driver.executeScript("return window.__xss;")).isNull();
		screenshot("hostile");
		assertOnlyRequestsToTheApplication();
	}

	/**
	 * Send this user's Basic credentials with every request from now on, forget the
	 * session, and load the overview.
	 */
	private static void logIn(String user) {
		String credentials = user + ":" + DashboardTestApplications.password(user);
		driver.executeCdpCommand("Network.setExtraHTTPHeaders", Map.of("headers", Map.of("Authorization",
				"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)))));
		driver.get(origin + "/delayed-tasks/");
		driver.manage().deleteAllCookies();
		driver.get(origin + "/delayed-tasks/");
		waitForText(By.id("user"), user.equals("reader") ? "reader (read-only)" : "writer");
		waitFor(By.id("queues"));
	}

	/**
	 * Open a page of the dashboard and wait until it shows it.
	 */
	private static void show(String fragment) {
		driver.get(origin + "/delayed-tasks/" + fragment);
		// Only the fragment may have changed: the page that was shown may still be there.
		String[] parts = fragment.split("/");
		if (fragment.contains("/tasks/")) {
			waitForText(By.id("task-id"), parts[parts.length - 1]);
		}
		else if (fragment.startsWith("#/queues/")) {
			waitForText(By.id("queue-name"), parts[parts.length - 1]);
		}
		else if (fragment.startsWith("#/schedules")) {
			waitFor(By.id("schedules"));
		}
		else if (fragment.startsWith("#/instances")) {
			waitFor(By.id("instances"));
		}
		else {
			waitFor(By.id("queues"));
		}
	}

	private static void find(String queue, TaskId id) {
		WebElement queueField = driver.findElement(By.id("find-queue"));
		queueField.clear();
		queueField.sendKeys(queue);
		WebElement idField = driver.findElement(By.id("find-id"));
		idField.clear();
		idField.sendKeys(id.value());
		driver.findElement(By.cssSelector("#find button[type='submit']")).click();
		if (!id.value().equals("no-such-task")) {
			waitForText(By.id("task-id"), id.value());
		}
	}

	private static WebElement waitFor(By by) {
		return new WebDriverWait(driver, WAIT).until(ExpectedConditions.presenceOfElementLocated(by));
	}

	private static void waitForText(By by, String text) {
		new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class)
			.until((WebDriver ignored) -> driver.findElements(by)
				.stream()
				.anyMatch((element) -> element.getText().equals(text)));
	}

	/**
	 * Click what the page shows now: it redraws itself every few seconds.
	 */
	private static void click(By by) {
		new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class).until((WebDriver ignored) -> {
			driver.findElement(by).click();
			return true;
		});
	}

	private static List<String> cells(WebElement row) {
		return row.findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
	}

	private static List<String> texts(By by) {
		return new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class)
			.until((WebDriver ignored) -> driver.findElements(by).stream().map(WebElement::getText).toList());
	}

	/**
	 * Every resource the current page loaded (scripts, styles, every fetch of the API)
	 * came from the application.
	 */
	@SuppressWarnings("unchecked")
	private static void assertOnlyRequestsToTheApplication() {
		List<String> requested = (List<String>) ((JavascriptExecutor) driver).executeScript(
				"return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
						+ ".map((entry) => entry.name);");
		assertThat(requested).isNotEmpty()
			.anyMatch((url) -> url.contains("/delayed-tasks/api/"))
			.allSatisfy((url) -> assertThat(url).startsWith(origin + "/"));
	}

	private static void screenshot(String name) throws IOException {
		File file = driver.getScreenshotAs(OutputType.FILE);
		Files.copy(file.toPath(), SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
	}

	private static void awaitState(String queue, TaskId id, TaskState state) {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		await().atMost(WAIT).until(() -> scheduler.find(queue, id).map(TaskInfo::state).orElse(null) == state);
	}

	/**
	 * The handlers of the queues this class browses.
	 */
	@Configuration(proxyBeanMethods = false)
	static class BrowsedHandlers {

		private final Map<String, List<TaskId>> ran = new ConcurrentHashMap<>();

		@DelayedTaskHandler(queue = FAILING)
		void alwaysFail(String payload, TaskContext context) {
			record(context);
			throw new NonRetryableTaskException("always refused");
		}

		@DelayedTaskHandler(queue = REFUSED)
		void refuse(String payload, TaskContext context) {
			record(context);
			throw new NonRetryableTaskException("refused, every time");
		}

		@DelayedTaskHandler(queue = REDRIVE)
		void failOnce(String payload, TaskContext context) {
			if (record(context) == 1) {
				throw new NonRetryableTaskException("refused on its first run");
			}
		}

		@DelayedTaskHandler(queue = GROUPS)
		void groups(String payload, TaskContext context) {
			if (record(context) == 1) {
				if (payload.equals("a")) {
					throw new IllegalStateException("a refused");
				}
				throw new IllegalArgumentException("b refused");
			}
		}

		@DelayedTaskHandler(queue = LATER)
		void later(String payload, TaskContext context) {
			record(context);
		}

		@DelayedTaskHandler(queue = PAUSE)
		void pause(String payload, TaskContext context) {
			record(context);
		}

		long runs(String queue, TaskId id) {
			return this.ran.getOrDefault(queue, List.of()).stream().filter(id::equals).count();
		}

		private long record(TaskContext context) {
			this.ran.computeIfAbsent(context.queue(), (queue) -> new CopyOnWriteArrayList<>()).add(context.id());
			return runs(context.queue(), context.id());
		}

	}

}
