package dev.delayedtasks.benchmarks;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.StringJoiner;

import dev.delayedtasks.dashboard.DashboardReads;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ReflectionUtils;

/**
 * The dashboard, served by a web application of its own beside the benchmarks (which are
 * no web application): the same Redis and key prefix, no worker, no Spring Security (so
 * the dashboard is on only because {@code delayed-tasks.dashboard.enabled} says so, and
 * is read-only), its own Lettuce client whose commands {@link CommandCounts} counts.
 * Views are read through its HTTP API, as the page reads them.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class DashboardServer implements AutoCloseable {

	/** Where the dashboard is served (its default path). */
	static final String PATH = "/delayed-tasks";

	private final ConfigurableApplicationContext context;

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final String base;

	private final CommandCounts commands;

	private final DashboardReads reads;

	private final Method forgetOverview;

	private DashboardServer(ConfigurableApplicationContext context) {
		this.context = context;
		this.base = "http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort() + PATH;
		this.commands = context.getBean(CommandCounts.class);
		this.reads = context.getBean(DashboardReads.class);
		// Package-private in the dashboard, which forgets its overview after an action:
		// the page cannot ask for a fresh one, but the benchmark measures the read the
		// copy spares.
		Method forget = ReflectionUtils.findMethod(DashboardReads.class, "forgetOverview");
		if (forget == null) {
			throw new IllegalStateException("DashboardReads has no forgetOverview(): the dashboard workload cannot "
					+ "measure the overview's read of Redis");
		}
		ReflectionUtils.makeAccessible(forget);
		this.forgetOverview = forget;
	}

	/**
	 * Start the dashboard's application.
	 * @param redisUrl the benchmarks' Redis
	 * @param keyPrefix the run's key prefix
	 * @return the running dashboard
	 */
	static DashboardServer start(String redisUrl, String keyPrefix) {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(DashboardApplication.class).run(
				"--spring.main.web-application-type=servlet", "--spring.application.name=delayed-tasks-dashboard",
				"--server.address=127.0.0.1", "--server.port=0",
				"--" + BenchmarkRedisEnvironmentPostProcessor.REDIS_URL + "=" + redisUrl,
				"--delayed-tasks.key-prefix=" + keyPrefix, "--delayed-tasks.worker.enabled=false",
				"--delayed-tasks.dashboard.enabled=true",
				// Every instance re-reads the recurring schedules at this interval: not
				// a view's work, so kept out of the views' figures.
				"--delayed-tasks.snapshot-interval=1h");
		return new DashboardServer(context);
	}

	/**
	 * Read one view of the API and check that it answered 200.
	 * @param path below the dashboard's path, such as {@code /api/queues}
	 * @return the body
	 */
	String get(String path) {
		HttpRequest request = HttpRequest.newBuilder(URI.create(this.base + path))
			.timeout(Duration.ofSeconds(60))
			.header("Accept", "application/json")
			.GET()
			.build();
		try {
			HttpResponse<String> response = this.client.send(request, HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				throw new IllegalStateException(
						"The dashboard answered " + path + " with " + response.statusCode() + ": " + response.body());
			}
			return response.body();
		}
		catch (IOException ex) {
			throw new IllegalStateException("The dashboard did not answer " + path, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while reading " + path, ex);
		}
	}

	/**
	 * Forget the overview the dashboard keeps for its refresh interval, so that the next
	 * read of {@code /api/queues} reads Redis.
	 */
	void forgetOverview() {
		ReflectionUtils.invokeMethod(this.forgetOverview, this.reads);
	}

	/**
	 * The dashboard application's commands so far.
	 * @return the counts
	 */
	CommandCounts commands() {
		return this.commands;
	}

	/**
	 * A query string, its values encoded.
	 * @param namesAndValues name, value, name, value...
	 * @return the query, starting with {@code ?}
	 */
	static String query(String... namesAndValues) {
		StringJoiner query = new StringJoiner("&", "?", "");
		for (int i = 0; i + 1 < namesAndValues.length; i += 2) {
			query.add(namesAndValues[i] + "=" + URLEncoder.encode(namesAndValues[i + 1], StandardCharsets.UTF_8));
		}
		return query.toString();
	}

	@Override
	public void close() {
		this.context.close();
	}

	/**
	 * The dashboard's application: auto-configuration only. Not a configuration class, so
	 * that the benchmarks' component scan leaves it alone.
	 */
	@EnableAutoConfiguration
	static class DashboardApplication {

		@Bean
		CommandCounts dashboardCommandCounts() {
			return new CommandCounts();
		}

		@Bean
		ClientResourcesBuilderCustomizer dashboardCommandCounting(CommandCounts counts) {
			return (resources) -> resources.commandLatencyRecorder(counts);
		}

	}

}
