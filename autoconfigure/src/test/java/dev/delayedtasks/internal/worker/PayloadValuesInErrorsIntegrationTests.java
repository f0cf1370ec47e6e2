package dev.delayedtasks.internal.worker;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.actuate.DelayedTasksEndpoint;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksEndpointAutoConfiguration;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Payload and header values never reach what the library records about a failure: an
 * unreadable envelope whose headers hold an e-mail address and a bearer token, a value of
 * the wrong type, and a map keyed by e-mail addresses are dead-lettered with the type,
 * the place in the document and the rule, and none of the values shows in the error
 * record in Redis, the dead letters, the endpoint's JSON, the log, or the failure handed
 * to listeners. With {@code delayed-tasks.include-payload-in-errors=true} the values
 * show, as they did before.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class PayloadValuesInErrorsIntegrationTests {

	private static final String PERSON = "pii-person";

	private static final String SCORES = "pii-scores";

	/** Values an attacker with a read-only account must never see. */
	private static final List<String> VALUES = List.of("dave@example.com", "tok-SECRET-123", "alice@example.com",
			"bob@example.com", "carol@example.com", "acme-tenant");

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	PayloadValuesInErrorsIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksEndpointAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"management.endpoints.web.exposure.include=delayedtasks")
			.withUserConfiguration(Handlers.class);
	}

	@Test
	void deadLettersEndpointLogsAndListenersShowNoPayloadOrHeaderValue(CapturedOutput output) {
		this.runner.withPropertyValues("test.prefix=pii").run((context) -> {
			Attack attack = attack(context, "pii");
			await().atMost(WAIT)
				.until(() -> context.getBean(DeadLetters.class).count(PERSON + "-pii") == 4
						&& context.getBean(DeadLetters.class).count(SCORES + "-pii") == 1);
			List<DeadLetter> letters = letters(context, "pii");
			assertThat(letters).hasSize(5).allSatisfy((letter) -> {
				assertThat(letter.reason()).isEqualTo("unreadable-payload");
				assertThat(letter.exceptionType()).isEqualTo(IllegalArgumentException.class.getName());
			});
			assertThat(message(letters, attack.truncated()))
				.startsWith("The stored payload is not a readable task envelope: not valid JSON: "
						+ "UnexpectedEndOfInputException at line 1, column ")
				.endsWith(": the JSON ends too early");
			assertThat(message(letters, attack.notAnEnvelope()))
				.isEqualTo("The stored payload is not a readable task envelope: not a task envelope: "
						+ "JSON object without the payload field \"b\"");
			assertThat(message(letters, attack.wrongType())).isEqualTo("cannot convert the payload to "
					+ Person.class.getName() + ": InvalidFormatException at $.age: not a valid int");
			assertThat(message(letters, attack.wrongTypeWithHeader())).isEqualTo("cannot convert the payload to "
					+ Person.class.getName() + ": MismatchedInputException at $.email: the JSON value does not fit "
					+ String.class.getName());
			assertThat(message(letters, attack.mapKey()))
				.isEqualTo("cannot convert the payload to " + Scores.class.getName()
						+ ": InvalidFormatException at $.points[*]: not a valid java.lang.Integer");

			String records = errorRecords(context, attack);
			String endpoint = endpointJson(context, attack);
			String failures = context.getBean(Failures.class).describe();
			assertThat(failures).contains("not a valid int");
			for (String value : VALUES) {
				assertThat(records).as("error records in Redis").doesNotContain(value);
				assertThat(letters).as("dead letters")
					.allSatisfy((letter) -> assertThat(letter.message() + letter.stackTrace()).doesNotContain(value));
				assertThat(endpoint).as("endpoint JSON").doesNotContain(value);
				assertThat(failures).as("failures handed to listeners").doesNotContain(value);
				assertThat(output.getAll()).as("log").doesNotContain(value);
			}
			// The log still says which task failed and why.
			assertThat(output.getOut()).contains("Task " + attack.wrongType() + " of queue '" + PERSON + "-pii'")
				.contains("InvalidFormatException at $.age: not a valid int");
		});
	}

	@Test
	void valuesShowWhenTheApplicationOptsIn(CapturedOutput output) {
		this.runner.withPropertyValues("test.prefix=optin", "delayed-tasks.include-payload-in-errors=true")
			.run((context) -> {
				Attack attack = attack(context, "optin");
				await().atMost(WAIT)
					.until(() -> context.getBean(DeadLetters.class).count(PERSON + "-optin") == 4
							&& context.getBean(DeadLetters.class).count(SCORES + "-optin") == 1);
				List<DeadLetter> letters = letters(context, "optin");
				assertThat(message(letters, attack.truncated())).contains("dave@example.com")
					.contains("tok-SECRET-123");
				assertThat(message(letters, attack.wrongType())).contains("\"alice@example.com\"");
				assertThat(output.getOut()).contains("alice@example.com");
			});
	}

	/**
	 * Schedule the attack: every task is dead-lettered on its first delivery as
	 * unreadable.
	 */
	private Attack attack(AssertableApplicationContext context, String suffix) {
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
		String person = PERSON + "-" + suffix;
		PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), person);
		TaskId truncated = scheduler.schedule(person, new Person(1, "x"), Duration.ofHours(1));
		redis.opsForValue()
			.set(keys.payload(truncated.value()),
					"{\"h\":{\"tenant\":\"acme-tenant\",\"user-email\":\"dave@example.com\","
							+ "\"authorization\":\"Bearer tok-SECRET-123\"},\"b\":{\"age\":");
		TaskId notAnEnvelope = scheduler.schedule(person, new Person(1, "x"), Duration.ofHours(1));
		redis.opsForValue()
			.set(keys.payload(notAnEnvelope.value()), "{\"h\":{\"user-email\":\"dave@example.com\"},\"x\":1}");
		scheduler.reschedule(person, truncated, Duration.ZERO);
		scheduler.reschedule(person, notAnEnvelope, Duration.ZERO);
		TaskId wrongType = scheduler.enqueue(person, Map.of("age", "alice@example.com", "email", "a"));
		TaskId wrongTypeWithHeader = scheduler.schedule(TaskRequest.of(person, Map.of("age", 1, "email", List.of(1)))
			.header("user-email", "carol@example.com")
			.header("tenant", "acme-tenant"));
		TaskId mapKey = scheduler.enqueue(SCORES + "-" + suffix,
				Map.of("points", Map.of("bob@example.com", "many", "alice@example.com", "few")));
		return new Attack(suffix, truncated, notAnEnvelope, wrongType, wrongTypeWithHeader, mapKey);
	}

	private static List<DeadLetter> letters(AssertableApplicationContext context, String suffix) {
		DeadLetters deadLetters = context.getBean(DeadLetters.class);
		List<DeadLetter> letters = new CopyOnWriteArrayList<>(deadLetters.list(PERSON + "-" + suffix, 10));
		letters.addAll(deadLetters.list(SCORES + "-" + suffix, 10));
		return letters;
	}

	private static String message(List<DeadLetter> letters, TaskId id) {
		return letters.stream().filter((letter) -> letter.id().equals(id)).findFirst().orElseThrow().message();
	}

	private String errorRecords(AssertableApplicationContext context, Attack attack) {
		StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
		StringBuilder records = new StringBuilder();
		for (TaskId id : attack.personTasks()) {
			records.append(redis.opsForValue()
				.get(PartitionKeys.of(this.redis.keyPrefix(), PERSON + "-" + attack.suffix()).error(id.value())));
		}
		records.append(redis.opsForValue()
			.get(PartitionKeys.of(this.redis.keyPrefix(), SCORES + "-" + attack.suffix())
				.error(attack.mapKey().value())));
		return records.toString();
	}

	private static String endpointJson(AssertableApplicationContext context, Attack attack) {
		DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
		JsonMapper json = context.getBean(JsonMapper.class);
		String person = PERSON + "-" + attack.suffix();
		StringBuilder text = new StringBuilder(json.writeValueAsString(endpoint.queues()));
		text.append(json.writeValueAsString(endpoint.queue(person)));
		text.append(json.writeValueAsString(endpoint.queue(SCORES + "-" + attack.suffix())));
		for (TaskId id : attack.personTasks()) {
			text.append(json.writeValueAsString(endpoint.task(person, id.value())));
		}
		return text.toString();
	}

	record Attack(String suffix, TaskId truncated, TaskId notAnEnvelope, TaskId wrongType, TaskId wrongTypeWithHeader,
			TaskId mapKey) {

		List<TaskId> personTasks() {
			return List.of(this.truncated, this.notAnEnvelope, this.wrongType, this.wrongTypeWithHeader);
		}

	}

	record Person(int age, String email) {
	}

	record Scores(Map<String, Integer> points) {
	}

	/** Every failure handed to listeners, with its causes and their messages. */
	static class Failures implements DelayedTaskListener {

		private final List<Throwable> failures = new CopyOnWriteArrayList<>();

		@Override
		public void deadLettered(TaskContext context, Throwable failure, String reason) {
			this.failures.add(failure);
		}

		String describe() {
			StringWriter text = new StringWriter();
			for (Throwable failure : this.failures) {
				failure.printStackTrace(new PrintWriter(text));
			}
			return text.toString();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@Bean
		Failures failures() {
			return new Failures();
		}

		@DelayedTaskHandler(queue = PERSON + "-${test.prefix}")
		void person(Person person) {
		}

		@DelayedTaskHandler(queue = SCORES + "-${test.prefix}")
		void scores(Scores scores) {
		}

	}

}
