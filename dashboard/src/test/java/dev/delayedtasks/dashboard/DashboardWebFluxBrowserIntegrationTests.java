package dev.delayedtasks.dashboard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.dashboard.DashboardWebFluxTestApplications.SecuredReactive;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;

import org.springframework.boot.reactor.netty.NettyWebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard's page in a real headless Chromium against a real WebFlux application on
 * Netty with reactive Spring Security (HTTP Basic, a reader and a writer, next to a chain
 * of the application's own that denies everything), with real handlers on a real Redis,
 * as {@link DashboardBrowserIntegrationTests} has it on Spring MVC: the overview lists a
 * queue with its counts; the queue shows its scheduled tasks, earliest first; the header
 * form finds a task; a writer redrives a dead letter, the handler runs it again and Redis
 * keeps no dead letter of it; a reader sees no write control on the overview, queue and
 * task pages that show them to a writer; the page requests nothing outside the
 * application. Screenshots go to {@code target/dashboard-screenshots}, named
 * {@code webflux-*}.
 */
@WithRedis
class DashboardWebFluxBrowserIntegrationTests {

	private static final Duration WAIT = Browser.WAIT;

	private static final String READER = DashboardTestApplications.READER;

	private static final String WRITER = DashboardTestApplications.WRITER;

	/** Its handler records its runs: tasks half an hour away and more stay scheduled. */
	private static final String WORK = "work";

	/** Its handler refuses every run for good: two dead letters. */
	private static final String DOOMED = "doomed";

	/** Its handler refuses the first run of each task for good. */
	private static final String REDRIVE = "fail-once";

	private static ConfigurableApplicationContext app;

	private static Browser browser;

	/** The browser's driver, for what the page shows. */
	private static ChromeDriver driver;

	private static List<TaskId> later;

	private static List<TaskId> dead;

	@BeforeAll
	static void start(TestRedis redis) throws Exception {
		if (!Browser.installed()) {
			return;
		}
		app = DashboardWebFluxTestApplications.start(redis, null, null, new Class<?>[] { SecuredReactive.class },
				"--test.application-chain=deny-all");
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		later = new ArrayList<>();
		later.add(scheduler.schedule(WORK, "in half an hour", Duration.ofMinutes(30)));
		for (int i = 0; i < 2; i++) {
			later.add(scheduler.schedule(WORK, "in 90 minutes " + i, Duration.ofMinutes(90)));
		}
		dead = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			dead.add(scheduler.enqueue(DOOMED, "doomed " + i));
		}
		for (TaskId id : dead) {
			awaitState(DOOMED, id, TaskState.DEAD);
		}
		browser = Browser.open(app, "webflux-");
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
	void theOverviewListsAQueueWithItsCountsAndTheQueueShowsItsScheduledTasks() throws Exception {
		// Spring MVC is on the class path too: the page must be served by the reactive
		// stack, or this class would only repeat the MVC one.
		assertThat(((WebServerApplicationContext) app).getWebServer()).isInstanceOf(NettyWebServer.class);
		assertThat(app.getBeanNamesForType(ReactiveDashboardController.class)).hasSize(1);
		assertThat(app.getBeanNamesForType(DashboardController.class)).isEmpty();
		browser.logIn(READER);
		List<String> work = browser.cells(By.cssSelector("#queues tr[data-queue='" + WORK + "']"));
		// Scheduled, ready, running, dead; then due in a minute, an hour, a day.
		assertThat(work.subList(0, 5)).containsExactly(WORK, "3", "0", "0", "0");
		assertThat(work.subList(7, 10)).containsExactly("0", "1", "3");
		assertThat(browser.cells(By.cssSelector("#queues tr[data-queue='" + DOOMED + "']")).subList(0, 5))
			.containsExactly(DOOMED, "0", "0", "0", "2");
		assertThat(driver.findElement(By.id("user")).getText()).isEqualTo("reader (read-only)");
		browser.screenshot("overview");

		browser.click(By.cssSelector("a[data-queue-link='" + WORK + "']"));
		browser.waitForText(By.id("queue-name"), WORK);
		assertThat(browser.texts(By.cssSelector("#scheduled tbody tr td:first-child")))
			.containsExactlyInAnyOrderElementsOf(later.stream().map(TaskId::value).toList())
			.first()
			.as("the earliest first")
			.isEqualTo(later.get(0).value());
		assertThat(driver.getCurrentUrl()).endsWith("/delayed-tasks/#/queues/" + WORK);
		browser.screenshot("queue");
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void theHeaderFormFindsATask() throws Exception {
		browser.logIn(READER);
		browser.find(WORK, later.get(0));
		assertThat(driver.findElement(By.cssSelector("dd[data-field='state']")).getText()).isEqualTo("SCHEDULED");
		assertThat(driver.getCurrentUrl()).endsWith("#/queues/" + WORK + "/tasks/" + later.get(0));
		browser.screenshot("task");
		browser.find(DOOMED, dead.get(0));
		assertThat(driver.findElement(By.cssSelector("dd[data-field='state']")).getText()).isEqualTo("DEAD");
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void aWriterRedrivesADeadLetterAndItsHandlerRunsItAgain() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		Handlers handlers = app.getBean(Handlers.class);
		TaskId id = scheduler.enqueue(REDRIVE, "fails once");
		awaitState(REDRIVE, id, TaskState.DEAD);
		browser.logIn(WRITER);
		browser.show("#/queues/" + REDRIVE);
		assertThat(driver.findElement(By.id("user")).getText()).isEqualTo(WRITER);
		By row = By.cssSelector("#dead-letters tr[data-dead='" + id + "']");
		browser.waitFor(row);
		browser.screenshot("redrive-before");
		// A write through WebFlux's CSRF protection: the token of the browser's web
		// session, which the page read from the API.
		browser.click(By.cssSelector("#dead-letters tr[data-dead='" + id + "'] button[data-action='redrive']"));
		browser.waitForText(By.id("status"), "redrive: done (1)");
		await().atMost(WAIT).until(() -> handlers.runs(REDRIVE, id).size() == 2);
		await().atMost(WAIT).until(() -> scheduler.find(REDRIVE, id).isEmpty());
		assertThat(app.getBean(DeadLetters.class).count(REDRIVE)).isZero();
		browser.until(ExpectedConditions.numberOfElementsToBe(row, 0));
		browser.screenshot("redrive-after");
		browser.assertOnlyRequestsToTheApplication();
	}

	@Test
	void aReaderSeesNoWriteControlOnTheOverviewQueueAndTaskPages() throws Exception {
		List<String> pages = List.of("#/", "#/queues/" + WORK, "#/queues/" + DOOMED,
				"#/queues/" + WORK + "/tasks/" + later.get(1), "#/queues/" + DOOMED + "/tasks/" + dead.get(1));
		browser.logIn(WRITER);
		// The overview has no write control for anyone; the other pages show the writer
		// theirs, so that their absence for the reader says something.
		for (String page : pages.subList(1, pages.size())) {
			browser.show(page);
			assertThat(driver.findElements(By.cssSelector("button.write"))).as("the writer on " + page).isNotEmpty();
		}
		browser.logIn(READER);
		for (String page : pages) {
			browser.show(page);
			assertThat(driver.findElements(By.cssSelector("button.write"))).as("the reader on " + page).isEmpty();
		}
		browser.screenshot("reader-task");
		browser.assertOnlyRequestsToTheApplication();
	}

	private static void awaitState(String queue, TaskId id, TaskState state) {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		await().atMost(WAIT).until(() -> scheduler.find(queue, id).map(TaskInfo::state).orElse(null) == state);
	}

}
