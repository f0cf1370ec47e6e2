package dev.delayedtasks.dashboard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

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
import dev.delayedtasks.internal.store.LeaseHolders;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.worker.HandlerContainerFactory;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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

	private static final Duration WAIT = Browser.WAIT;

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

	/** No handler: ready tasks, one of them leased. */
	private static final String READY = "b-ready";

	/** No handler: a task whose id is {@code ..}. */
	private static final String FIND = "b-find";

	private static ConfigurableApplicationContext app;

	private static Browser browser;

	/** The browser's driver, for what the page shows. */
	private static ChromeDriver driver;

	private static List<TaskId> dead;

	private static List<TaskId> later;

	@BeforeAll
	static void start(TestRedis redis) throws Exception {
		if (!Browser.installed()) {
			return;
		}
		app = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class, BrowsedHandlers.class },
				"--test.application-chain=deny-all", "--delayed-tasks.dashboard.show-payloads=true",
				"--delayed-tasks.queues." + GROUPS + ".concurrency=4");
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
		browser = Browser.open(app, "");
		driver = browser.driver();
	}

	@AfterAll
	static void stop() {
		if (browser != null) {
			browser.close();
		}
		if (app != null) {
			app.close();
		}
	}

	@BeforeEach
	void browserIsInstalled() {
		Browser.assumeInstalled();
	}

	@Test
	void theOverviewListsTheQueuesWithTheirCountsAndAQueueShowsItsTasksAndDeadLetters() throws Exception {
		browser.logIn("reader");
		WebElement failing = browser.waitFor(By.cssSelector("#queues tr[data-queue='" + FAILING + "']"));
		// Per minute (created / succeeded / failed) comes from the history the handlers
		// record: its value depends on
		// when the last sample was taken.
		assertThat(Browser.cells(failing).subList(0, 5)).containsExactly(FAILING, "0", "0", "0", "3");
		assertThat(Browser.cells(failing).get(5)).matches("[0-9.]+ / [0-9.]+ / [0-9.]+");
		// Lateness p50 / p99 of the last 5 minutes, to a bucket's bound, or none yet.
		assertThat(Browser.cells(failing).get(6)).matches("(≤ [0-9.]+ m?s|—) / (≤ [0-9.]+ m?s|—)");
		assertThat(Browser.cells(failing).subList(7, 10)).containsExactly("0", "0", "0");
		List<String> laterCells = Browser
			.cells(browser.waitFor(By.cssSelector("#queues tr[data-queue='" + LATER + "']")));
		assertThat(laterCells.subList(0, 5)).containsExactly(LATER, "4", "0", "0", "0");
		assertThat(laterCells.subList(7, 10)).containsExactly("0", "1", "4");
		assertThat(driver.findElement(By.id("user")).getText()).isEqualTo("reader (read-only)");
		browser.screenshot("overview");

		browser.click(By.cssSelector("a[data-queue-link='" + LATER + "']"));
		browser.waitForText(By.id("queue-name"), LATER);
		List<String> scheduled = browser.texts(By.cssSelector("#scheduled tbody tr td:first-child"));
		assertThat(scheduled).containsExactlyInAnyOrderElementsOf(later.stream().map(TaskId::value).toList())
			.first()
			.as("the earliest first")
			.isEqualTo(later.get(0).value());
		assertThat(driver.getCurrentUrl()).endsWith("/delayed-tasks/#/queues/" + LATER);

		driver.navigate().back();
		browser.waitFor(By.cssSelector("#queues tr[data-queue='" + FAILING + "']"));
		browser.click(By.cssSelector("a[data-queue-link='" + FAILING + "']"));
		browser.waitForText(By.id("queue-name"), FAILING);
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
		assertThat(Browser.cells(groups.get(0))).startsWith("non-retryable", NonRetryableTaskException.class.getName(),
				"3");
		assertThat(browser.texts(By.cssSelector("#dead-letters tbody tr td:first-child")))
			.containsExactlyInAnyOrderElementsOf(dead.stream().map(TaskId::value).toList());
		browser.screenshot("queue");
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void theHeaderFormFindsATaskEvenOneWhoseIdIsDots() throws Exception {
		browser.logIn("reader");
		browser.waitFor(By.cssSelector("#queues tr[data-queue='" + LATER + "']"));
		browser.find(LATER, later.get(0));
		assertThat(driver.findElement(By.cssSelector("dd[data-field='state']")).getText()).isEqualTo("SCHEDULED");
		browser.screenshot("task");
		browser.find(FAILING, dead.get(0));
		assertThat(driver.findElement(By.cssSelector("dd[data-field='state']")).getText()).isEqualTo("DEAD");
		assertThat(driver.findElement(By.cssSelector("dd[data-field='last error']")).getText())
			.contains("always refused");
		// Payloads are shown, read-only to the reader.
		browser.waitForText(By.id("payload"), "\"doomed 0\"");
		assertThat(driver.findElements(By.id("payload-editor"))).isEmpty();
		browser.find(FIND, TaskId.of(".."));
		assertThat(driver.findElement(By.cssSelector("dd[data-field='state']")).getText()).isEqualTo("SCHEDULED");
		assertThat(driver.getCurrentUrl()).endsWith("#/queues/" + FIND + "/tasks/..");
		browser.find(LATER, TaskId.of("no-such-task"));
		browser.waitForText(By.cssSelector("#view h1"), "No task no-such-task in " + LATER);
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void aWriterRedrivesADeadLetterWithoutConfirming() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		BrowsedHandlers handlers = app.getBean(BrowsedHandlers.class);
		TaskId id = scheduler.enqueue(REDRIVE, "fails once");
		awaitState(REDRIVE, id, TaskState.DEAD);
		browser.logIn("writer");
		browser.show("#/queues/" + REDRIVE);
		assertThat(driver.findElement(By.id("user")).getText()).isEqualTo("writer");
		browser.click(By.cssSelector("#dead-letters tr[data-dead='" + id + "'] button[data-action='redrive']"));
		browser.waitForText(By.id("status"), "redrive: done (1)");
		await().atMost(WAIT).until(() -> handlers.runs(REDRIVE, id) == 2);
		await().atMost(WAIT).until(() -> scheduler.find(REDRIVE, id).isEmpty());
		assertThat(app.getBean(DeadLetters.class).count(REDRIVE)).isZero();
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void aWriterPausesAQueueAfterConfirming() throws Exception {
		QueueControl control = app.getBean(QueueControl.class);
		browser.logIn("writer");
		browser.show("#/queues/" + PAUSE);
		browser.click(By.cssSelector("button[data-action='pause']"));
		Alert confirm = browser.waitForAlert();
		assertThat(confirm.getText()).isEqualTo("Pause " + PAUSE + " on every instance?");
		assertThat(control.isPaused(PAUSE)).as("not before it is confirmed").isFalse();
		confirm.accept();
		await().atMost(WAIT).until(() -> control.isPaused(PAUSE));
		browser.waitFor(By.cssSelector("button[data-action='resume']"));
		assertThat(driver.findElement(By.cssSelector("#view h1 .pill.paused")).getText()).isEqualTo("paused");
		browser.screenshot("paused");
		browser.assertOnlyRequestsToTheApplication();
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
		browser.logIn("reader");
		browser.show("#/queues/" + PAGED);
		browser.waitForText(By.cssSelector("#scheduled + p"), "1–20 of 25. next →");
		assertThat(browser.texts(By.cssSelector("#scheduled tbody tr td:first-child"))).hasSize(20)
			.first()
			.isEqualTo(paged.get(0).value());
		browser.click(By.cssSelector("button[data-page='scheduled-next']"));
		browser.waitForText(By.cssSelector("#scheduled + p"), "21–25 of 25. ← previous");
		assertThat(browser.texts(By.cssSelector("#scheduled tbody tr td:first-child")))
			.containsExactlyElementsOf(paged.subList(20, 25).stream().map(TaskId::value).toList());
		browser.show("#/queues/" + PAGED + "/tasks/" + paged.get(3));
		assertThat(browser.waitFor(By.cssSelector("#headers")).getText()).contains("tenant", "acme");
		browser.screenshot("task-headers");
		browser.assertOnlyRequestsToTheApplication();
	}

	/**
	 * A queue's page lists its ready tasks in claim order (highest priority first) and
	 * its running tasks with the instance that holds each lease.
	 */
	@Test
	void readyTasksAreListedInClaimOrderAndRunningOnesWithTheirHolder() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		scheduler.schedule(TaskRequest.of(READY, "taken").id("taken").priority(9));
		scheduler.schedule(TaskRequest.of(READY, "plain").id("plain"));
		scheduler.schedule(TaskRequest.of(READY, "urgent").id("urgent").priority(4));
		// A claim by this instance's tag: no handler runs the queue, so the lease stays.
		String here = app.getBean(HandlerContainerFactory.class).instanceId();
		assertThat(app.getBean(TaskStore.class).claim(READY, 1, LeaseHolders.loopNonce(here, 1000) + ".1").tasks())
			.hasSize(1);
		browser.logIn("reader");
		browser.show("#/queues/" + READY);
		browser.waitForText(By.cssSelector("#ready + p"), "1–2 of 2.");
		assertThat(browser.texts(By.cssSelector("#ready tbody tr td:first-child"))).containsExactly("urgent", "plain");
		// The instance reports itself a second after it starts: the page, refreshing,
		// then
		// names it.
		browser.waitForText(By.cssSelector("#running tbody tr[data-task='taken'] td:last-child"), here);
		assertThat(browser.cells(By.cssSelector("#running tbody tr[data-task='taken']"))).last().isEqualTo(here);
		browser.screenshot("queue-ready-running");
		browser.assertOnlyRequestsToTheApplication();
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
		browser.logIn("writer");
		browser.show("#/schedules");
		By row = By.cssSelector("#schedules tr[data-schedule='b-yearly']");
		browser.waitFor(row);
		assertThat(driver.findElement(row).findElement(By.cssSelector("td[data-field='last']")).getText())
			.isEqualTo("—");
		browser.click(By.cssSelector("#schedules tr[data-schedule='b-yearly'] button[data-action='trigger']"));
		Alert confirm = browser.waitForAlert();
		assertThat(confirm.getText()).isEqualTo("Run b-yearly once now?");
		confirm.accept();
		await().atMost(WAIT)
			.until(() -> handlers.ran("work").stream().anyMatch((id) -> id.value().startsWith("b-yearly:")));
		await().atMost(WAIT).until(() -> "succeeded".equals(recurring.find("b-yearly").orElseThrow().lastOutcome()));
		browser.show("#/schedules");
		browser.waitForText(By.cssSelector("#schedules tr[data-schedule='b-yearly'] td[data-field='outcome']"),
				"succeeded");
		browser.screenshot("schedules");
		browser.logIn("reader");
		browser.show("#/schedules");
		browser.waitFor(row);
		assertThat(driver.findElements(By.cssSelector("#schedules button.write"))).isEmpty();
		browser.show("#/instances");
		String instanceId = app.getBean(HandlerContainerFactory.class).instanceId();
		By instance = By.cssSelector("#instances tr[data-instance='" + instanceId + "']");
		browser.waitFor(instance);
		assertThat(driver.findElement(instance).findElements(By.cssSelector("[data-handler]")))
			.extracting((element) -> element.getDomAttribute("data-handler"))
			.contains("work", FAILING, REDRIVE);
		browser.screenshot("instances");
		recurring.remove("b-yearly");
		browser.assertOnlyRequestsToTheApplication();
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

		browser.logIn("writer");
		browser.show("#/queues/" + GROUPS);
		By group = By.cssSelector("#dead-groups tr[data-group='" + IllegalStateException.class.getName() + "']");
		assertThat(Browser.cells(browser.waitFor(group))).startsWith("retries-exhausted",
				IllegalStateException.class.getName(), "105");
		browser.screenshot("group-before");
		browser.click(By.cssSelector("#dead-groups tr[data-group='" + IllegalStateException.class.getName()
				+ "'] button[data-action='redrive-group']"));
		Alert confirm = browser.waitForAlert();
		assertThat(confirm.getText()).isEqualTo("redrive every dead letter of " + GROUPS + " with retries-exhausted / "
				+ IllegalStateException.class.getName() + "?");
		assertThat(deadLetters.count(GROUPS)).as("not before it is confirmed").isEqualTo(108);
		confirm.accept();
		browser.waitForText(By.id("status"), "redrive: 105 done, 3 dead letters left");
		assertThat(deadLetters.list(GROUPS, 1000)).extracting(DeadLetter::id)
			.containsExactlyInAnyOrderElementsOf(groupB);
		await().atMost(WAIT).until(() -> groupA.stream().allMatch((id) -> handlers.runs(GROUPS, id) == 2));
		browser
			.waitFor(By.cssSelector("#dead-groups tr[data-group='" + IllegalArgumentException.class.getName() + "']"));
		// The page shows the dead set after the action once its last read returns.
		browser.until(ExpectedConditions.numberOfElementsToBe(group, 0));
		browser.screenshot("group-after");
		browser.assertOnlyRequestsToTheApplication();
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
		browser.logIn("writer");
		browser.show("#/queues/" + REFUSED);
		browser.click(By.cssSelector("button[data-action='redrive-group']"));
		browser.waitForAlert().accept();
		browser.until((page) -> page.findElement(By.id("status"))
			.getText()
			.matches("redrive: \\d+ done, \\d+ dead letters left"));
		assertThat(driver.findElement(By.id("status")).getText()).startsWith("redrive: 5 done, ");
		await().atMost(WAIT).until(() -> ids.stream().allMatch((id) -> handlers.runs(REFUSED, id) == 2));
		await().atMost(WAIT).until(() -> app.getBean(DeadLetters.class).count(REFUSED) == 5);
		assertThat(ids).allMatch((id) -> handlers.runs(REFUSED, id) == 2);
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void aWriterMendsADeadLettersPayloadAndRedrivesIt() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		Handlers handlers = app.getBean(Handlers.class);
		TaskId id = scheduler.schedule(TaskRequest.of("mend", new Letter("", 1)).header("tenant", "acme"));
		awaitState("mend", id, TaskState.DEAD);
		browser.logIn("writer");
		browser.show("#/queues/mend/tasks/" + id);
		WebElement editor = browser.waitFor(By.id("payload-editor"));
		assertThat(json.readTree(editor.getDomProperty("value")))
			.isEqualTo(json.readTree("{\"to\":\"\",\"copies\":1}"));
		editor.clear();
		editor.sendKeys("{\"to\": \"ann@example.com\", \"copies\": 2}");
		browser.screenshot("edit-payload");
		browser.click(By.cssSelector("button[data-action='redrive-edited']"));
		browser.waitForText(By.id("status"), "redriven with the edited payload");
		await().atMost(WAIT).until(() -> handlers.runs("mend", id).size() == 2);
		Run run = handlers.runs("mend", id).get(1);
		assertThat(run.payload()).isEqualTo(new Letter("ann@example.com", 2));
		assertThat(run.headers()).containsEntry("tenant", "acme");
		await().atMost(WAIT).until(() -> scheduler.find("mend", id).isEmpty());
		assertThat(app.getBean(DeadLetters.class).list("mend", 100)).noneMatch((letter) -> letter.id().equals(id));
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void aReaderSeesNoWriteControlOnAnyPageThatShowsThemToAWriter() throws Exception {
		List<String> pages = List.of("#/", "#/queues/" + FAILING, "#/queues/" + LATER,
				"#/queues/" + LATER + "/tasks/" + later.get(1), "#/queues/" + FAILING + "/tasks/" + dead.get(1));
		browser.logIn("writer");
		for (String page : pages.subList(1, pages.size())) {
			browser.show(page);
			assertThat(driver.findElements(By.cssSelector("button.write"))).as("the writer on " + page).isNotEmpty();
		}
		assertThat(driver.findElements(By.id("payload-editor"))).as("the writer on a dead letter").hasSize(1);
		browser.logIn("reader");
		for (String page : pages) {
			browser.show(page);
			assertThat(driver.findElements(By.cssSelector("button.write"))).as("the reader on " + page).isEmpty();
		}
		browser.waitFor(By.id("payload"));
		assertThat(driver.findElements(By.id("payload-editor"))).as("the reader on a dead letter").isEmpty();
		browser.screenshot("reader-task");
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void taskDataMadeOfHtmlIsShownAsText() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		TaskId id = scheduler.enqueue("doomed", Handlers.HOSTILE);
		awaitState("doomed", id, TaskState.DEAD);
		browser.logIn("writer");
		browser.show("#/queues/doomed");
		browser.waitFor(By.cssSelector("#dead-letters tbody tr"));
		assertThat(driver.findElement(By.id("dead-letters")).getText()).contains("<img src=x onerror=");
		assertThat(driver.findElement(By.id("dead-groups")).getText()).contains("<script>");
		assertThat(driver.findElements(By.cssSelector("#view img, #view script"))).isEmpty();
		browser.show("#/queues/doomed/tasks/" + id);
		assertThat(driver.findElement(By.cssSelector("dd[data-field='last error']")).getText()).contains("<img src=x");
		assertThat(browser.waitFor(By.id("payload-editor")).getDomProperty("value")).contains("<img src=x onerror=",
				"<script>window.__xss=2</script>");
		assertThat(driver.findElements(By.cssSelector("#view img, #view script"))).isEmpty();
		assertThat(driver.executeScript("return window.__xss;")).isNull();
		browser.screenshot("hostile");
		browser.assertOnlyRequestsToTheApplication();
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
