package dev.delayedtasks.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import dev.delayedtasks.QueueControl;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's quotes API: an HTTP request that waits for a short task's result, and
 * reads it again later.
 */
@WithRedis
class QuotesIntegrationTests {

	private static final String PASSWORD = "quotes-secret";

	private final HttpClient http = HttpClient.newHttpClient();

	private final JsonMapper json = JsonMapper.builder().build();

	@Test
	void aRequestWaitsForTheQuoteTaskAndGetsItsResult(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "quote")) {
			HttpResponse<String> response = post(context, "{\"product\":\"widget\",\"quantity\":4}");

			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
			JsonNode quote = this.json.readTree(response.body());
			assertThat(quote.get("product").asString()).isEqualTo("widget");
			assertThat(quote.get("quantity").asInt()).isEqualTo(4);
			assertThat(quote.get("total").decimalValue()).isEqualByComparingTo("10.00");
		}
	}

	@Test
	void aQuoteThatTakesLongerIsAcceptedAndReadLater(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "later")) {
			QueueControl control = context.getBean(QueueControl.class);
			control.pause("quotes");
			HttpResponse<String> accepted = post(context, "{\"product\":\"gadget\",\"quantity\":2}");
			assertThat(accepted.statusCode()).isEqualTo(202);
			String location = accepted.headers().firstValue("Location").orElseThrow();
			assertThat(get(context, location).statusCode()).isEqualTo(202);

			control.resume("quotes");

			await().until(() -> get(context, location).statusCode() == 200);
			JsonNode quote = this.json.readTree(get(context, location).body());
			assertThat(quote.get("total").decimalValue()).isEqualByComparingTo("5.00");
		}
	}

	@Test
	void aRefusedQuoteAnswersWithTheReasonAndUnknownOrInvalidIdsAreTold(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "refused")) {
			HttpResponse<String> refused = post(context, "{\"product\":\"nothing\",\"quantity\":0}");
			assertThat(refused.statusCode()).isEqualTo(422);
			JsonNode body = this.json.readTree(refused.body());
			assertThat(body.get("status").asString()).isEqualTo("DEAD_LETTERED");
			assertThat(body.get("reason").asString()).isEqualTo("non-retryable");
			assertThat(body.get("message").asString()).contains("at least 1, not 0");

			assertThat(get(context, "/quotes/no-such-quote").statusCode()).isEqualTo(404);
			assertThat(get(context, "/quotes/bad%20id").statusCode()).isEqualTo(400);
			assertThat(send(context, null, "/quotes/no-such-quote", HttpRequest.newBuilder()).statusCode())
				.isEqualTo(401);
		}
	}

	private static ConfigurableApplicationContext start(TestRedis redis, String suffix) {
		return new SpringApplicationBuilder(SampleApplication.class).run("--spring.data.redis.url=" + redis.url(),
				"--delayed-tasks.key-prefix=" + redis.keyPrefix() + "-" + suffix, "--sample.demo-tasks=false",
				"--server.port=0", "--sample.security.user-password={noop}" + PASSWORD);
	}

	private HttpResponse<String> post(ConfigurableApplicationContext context, String body) throws Exception {
		return send(context, "user", "/quotes",
				HttpRequest.newBuilder()
					.header("Content-Type", "application/json")
					.POST(HttpRequest.BodyPublishers.ofString(body)));
	}

	private HttpResponse<String> get(ConfigurableApplicationContext context, String path) throws Exception {
		return send(context, "user", path, HttpRequest.newBuilder());
	}

	private HttpResponse<String> send(ConfigurableApplicationContext context, @Nullable String user, String path,
			HttpRequest.Builder request) throws Exception {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		request.uri(URI.create("http://127.0.0.1:" + port + path));
		if (user != null) {
			String credentials = user + ":" + PASSWORD;
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
