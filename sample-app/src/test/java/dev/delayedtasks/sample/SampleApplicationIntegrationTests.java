package dev.delayedtasks.sample;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@WithRedis
class SampleApplicationIntegrationTests {

	@Test
	void usesTheConfiguredRedisAndReportsHealthUp(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start("--spring.data.redis.url=" + redis.url(),
				"--delayed-tasks.key-prefix=" + redis.keyPrefix(), "--sample.demo-tasks=false")) {
			assertThat(context.getEnvironment().getProperty("spring.data.redis.url")).isEqualTo(redis.url());
			assertThat(health(context, null)).contains("\"status\":\"UP\"").doesNotContain("redis");
			// The documented demo login of application.yml.
			assertThat(health(context, "user:user-demo-password")).contains("\"status\":\"UP\"").contains("\"redis\"");
		}
	}

	@Test
	void showsDelayedExecutionRetriesAndDeadLettersWhenItStarts(TestRedis redis) {
		try (ConfigurableApplicationContext context = start("--spring.data.redis.url=" + redis.url(),
				"--delayed-tasks.key-prefix=" + redis.keyPrefix() + "-demo")) {
			DemoHandlers handlers = context.getBean(DemoHandlers.class);
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(() -> assertThat(handlers.events()).anyMatch((e) -> e.startsWith("reminded ada"))
					.anyMatch((e) -> e.startsWith("reminded linus"))
					.contains("flaky failed attempt 1", "flaky failed attempt 2", "flaky succeeded attempt 3",
							"doomed failed attempt 1", "doomed failed attempt 2"));
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(deadLetters.list("doomed", 10)).singleElement().satisfies((letter) -> {
					assertThat(letter.reason()).isEqualTo("retries-exhausted");
					assertThat(letter.exceptionType()).isEqualTo(IllegalArgumentException.class.getName());
					assertThat(letter.message()).isEqualTo("No mailbox for user nobody");
					assertThat(letter.attempts()).isEqualTo(2);
				}));
			assertThat(handlers.events()).filteredOn((e) -> e.startsWith("doomed")).hasSize(2);
		}
	}

	@Test
	void callsThePartnerWithinItsLimitsAndTheUrgentCallFirst(TestRedis redis) {
		try (ConfigurableApplicationContext context = start("--spring.data.redis.url=" + redis.url(),
				"--delayed-tasks.key-prefix=" + redis.keyPrefix() + "-partner")) {
			DemoHandlers handlers = context.getBean(DemoHandlers.class);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> handlers.events().stream().filter((e) -> e.startsWith("partner ")).count() == 8);
			Map<String, Long> leased = new LinkedHashMap<>();
			for (String event : handlers.events()) {
				if (event.startsWith("partner ")) {
					leased.put(event.substring(0, event.indexOf(" leased_ms=")),
							Long.parseLong(event.substring(event.indexOf("leased_ms=") + 10)));
				}
			}
			List<Long> acme = leased.entrySet()
				.stream()
				.filter((e) -> e.getKey().startsWith("partner acme"))
				.map(Map.Entry::getValue)
				.sorted()
				.toList();
			// 2 a second per customer, in Redis time: the third of any three acme calls
			// is leased at least a second after the first.
			for (int i = 2; i < acme.size(); i++) {
				assertThat(acme.get(i) - acme.get(i - 2)).as("ms between acme calls %d and %d", i - 1, i + 1)
					.isGreaterThanOrEqualTo(1000);
			}
			long urgent = leased.get("partner initech 'refund now'");
			assertThat(leased.values()).allSatisfy((at) -> assertThat(at).isGreaterThanOrEqualTo(urgent));
			// Another customer does not wait behind acme's backlog.
			assertThat(leased.get("partner globex 'sync 1'")).isLessThan(acme.get(acme.size() - 1));
		}
	}

	@Test
	void startsALocalRedisWhenNoneAnswersAndStopsItAfterwards() throws Exception {
		int deadPort = unusedPort();
		String url;
		try (ConfigurableApplicationContext context = start("--spring.data.redis.url=redis://127.0.0.1:" + deadPort,
				"--sample.demo-tasks=false")) {
			url = context.getEnvironment().getProperty("spring.data.redis.url");
			assertThat(url).isNotEqualTo("redis://127.0.0.1:" + deadPort);
			assertThat(health(context, null)).contains("\"status\":\"UP\"");
		}
		int localPort = URI.create(url).getPort();
		assertThat(canConnect(localPort)).isFalse();
	}

	private static ConfigurableApplicationContext start(String... args) {
		return new SpringApplicationBuilder(SampleApplication.class).run(concat(args, "--server.port=0"));
	}

	private static String health(ConfigurableApplicationContext context, @Nullable String credentials)
			throws Exception {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"));
		if (credentials != null) {
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(request.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(200);
		return response.body();
	}

	private static String[] concat(String[] args, String extra) {
		String[] all = Arrays.copyOf(args, args.length + 1);
		all[args.length] = extra;
		return all;
	}

	private static int unusedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	private static boolean canConnect(int port) {
		try (Socket socket = new Socket("127.0.0.1", port)) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
