package dev.delayedtasks.dashboard;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.delayedtasks.TaskId;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The installed headless Chromium on the dashboard of one running application, whatever
 * its web stack, for the browser tests: it logs in with HTTP Basic, opens the dashboard's
 * pages and waits for them, checks that a page requested nothing outside the application,
 * and takes screenshots into {@code target/dashboard-screenshots}.
 */
final class Browser implements AutoCloseable {

	/** How long a page or an effect of it is waited for. */
	static final Duration WAIT = Duration.ofSeconds(10);

	private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

	private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

	private static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");

	private final ChromeDriver driver;

	private final String origin;

	private final String screenshotPrefix;

	private Browser(ChromeDriver driver, String origin, String screenshotPrefix) {
		this.driver = driver;
		this.origin = origin;
		this.screenshotPrefix = screenshotPrefix;
	}

	/**
	 * Whether Debian's chromium and chromium-driver are installed: the tests use them and
	 * download no browser.
	 * @return whether both binaries are there
	 */
	static boolean installed() {
		return missing().isEmpty();
	}

	/**
	 * Skip the calling test, saying what to install, unless chromium and chromium-driver
	 * are installed.
	 */
	static void assumeInstalled() {
		String missing = missing();
		assumeTrue(missing.isEmpty(), () -> "Chromium and chromium-driver are not installed (no " + missing
				+ "): apt-get install chromium chromium-driver");
	}

	private static String missing() {
		return Stream.of(CHROMIUM, CHROMEDRIVER)
			.filter((binary) -> !Files.isExecutable(binary))
			.map(Path::toString)
			.collect(Collectors.joining(" and "));
	}

	/**
	 * Start a headless Chromium for the dashboard of a running application.
	 * @param app the application, on its web server
	 * @param screenshotPrefix put before each screenshot's name, so that the classes'
	 * screenshots do not overwrite each other's
	 * @return the browser, to be closed
	 * @throws IOException if the screenshot directory cannot be made
	 */
	static Browser open(ConfigurableApplicationContext app, String screenshotPrefix) throws IOException {
		String origin = "http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort();
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
		ChromeDriver driver = new ChromeDriver(service, options);
		driver.manage().timeouts().scriptTimeout(WAIT);
		driver.executeCdpCommand("Network.enable", Map.of());
		Files.createDirectories(SCREENSHOTS);
		return new Browser(driver, origin, screenshotPrefix);
	}

	ChromeDriver driver() {
		return this.driver;
	}

	/**
	 * Send this user's Basic credentials with every request from now on, forget the
	 * session, and load the overview.
	 * @param user a user of {@link DashboardTestApplications}
	 */
	void logIn(String user) {
		String credentials = user + ":" + DashboardTestApplications.password(user);
		this.driver.executeCdpCommand("Network.setExtraHTTPHeaders", Map.of("headers", Map.of("Authorization",
				"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)))));
		this.driver.get(this.origin + "/delayed-tasks/");
		this.driver.manage().deleteAllCookies();
		this.driver.get(this.origin + "/delayed-tasks/");
		waitForText(By.id("user"), user.equals(DashboardTestApplications.READER) ? "reader (read-only)" : user);
		waitFor(By.id("queues"));
	}

	/**
	 * Open a page of the dashboard and wait until it shows it.
	 * @param fragment the page's fragment, such as {@code #/queues/work}
	 */
	void show(String fragment) {
		this.driver.get(this.origin + "/delayed-tasks/" + fragment);
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

	/**
	 * Find a task with the header's form and, unless it is {@code no-such-task}, wait for
	 * its page.
	 * @param queue the queue
	 * @param id the task
	 */
	void find(String queue, TaskId id) {
		WebElement queueField = this.driver.findElement(By.id("find-queue"));
		queueField.clear();
		queueField.sendKeys(queue);
		WebElement idField = this.driver.findElement(By.id("find-id"));
		idField.clear();
		idField.sendKeys(id.value());
		this.driver.findElement(By.cssSelector("#find button[type='submit']")).click();
		if (!id.value().equals("no-such-task")) {
			waitForText(By.id("task-id"), id.value());
		}
	}

	WebElement waitFor(By by) {
		return new WebDriverWait(this.driver, WAIT).until(ExpectedConditions.presenceOfElementLocated(by));
	}

	void waitForText(By by, String text) {
		until((page) -> page.findElements(by).stream().anyMatch((element) -> element.getText().equals(text)));
	}

	Alert waitForAlert() {
		return new WebDriverWait(this.driver, WAIT).until(ExpectedConditions.alertIsPresent());
	}

	/**
	 * Wait until the condition holds on the page as it is now: it redraws itself every
	 * few seconds, so an element read may have been replaced since.
	 * @param <T> what the condition gives
	 * @param condition true or non-null once it holds
	 * @return what the condition gave
	 */
	<T> T until(Function<WebDriver, T> condition) {
		return new WebDriverWait(this.driver, WAIT).ignoring(StaleElementReferenceException.class).until(condition);
	}

	/**
	 * Click what the page shows now: it redraws itself every few seconds.
	 * @param by the element
	 */
	void click(By by) {
		until((page) -> {
			page.findElement(by).click();
			return true;
		});
	}

	List<String> texts(By by) {
		return until((page) -> page.findElements(by).stream().map(WebElement::getText).toList());
	}

	/**
	 * The texts of a table row's cells, as the page shows it now.
	 * @param row the row
	 * @return its cells' texts
	 */
	List<String> cells(By row) {
		return until((page) -> cells(page.findElement(row)));
	}

	static List<String> cells(WebElement row) {
		return row.findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
	}

	/**
	 * Every resource the current page loaded (scripts, styles, every fetch of the API)
	 * came from the application.
	 */
	@SuppressWarnings("unchecked")
	void assertOnlyRequestsToTheApplication() {
		List<String> requested = (List<String>) this.driver.executeScript(
				"return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
						+ ".map((entry) => entry.name);");
		assertThat(requested).isNotEmpty()
			.anyMatch((url) -> url.contains("/delayed-tasks/api/"))
			.allSatisfy((url) -> assertThat(url).startsWith(this.origin + "/"));
	}

	void screenshot(String name) throws IOException {
		File file = this.driver.getScreenshotAs(OutputType.FILE);
		Files.copy(file.toPath(), SCREENSHOTS.resolve(this.screenshotPrefix + name + ".png"),
				StandardCopyOption.REPLACE_EXISTING);
	}

	@Override
	public void close() {
		this.driver.quit();
	}

}
