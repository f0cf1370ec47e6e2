package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskQueue;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Declared queues ({@code delayed-tasks.queues.<name>}, with
 * {@code delayed-tasks.producer.declared-queues-only}) and typed queue handles, with the
 * starter's auto-configuration on a real Redis: what each kind of instance knows, what
 * fails, what is warned about, and that nothing is written for a refused request.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class QueueDeclarationsIntegrationTests {

	private static final String HANDLED = "payment-reminders";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	QueueDeclarationsIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.shutdown-timeout=1s", "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s")
			.withUserConfiguration(Reminders.class);
	}

	@Test
	void theDefaultsAcceptEveryQueue() {
		this.runner.run((context) -> {
			QueueDeclarations declarations = context.getBean(QueueDeclarations.class);
			assertThat(declarations.declared()).isEmpty();
			assertThat(context.getBean(DelayedTaskScheduler.class).schedule("anything-goes", "x", Duration.ofHours(1)))
				.isNotNull();
		});
	}

	@Test
	void declaredOnlyRefusesAQueueThatIsNeitherDeclaredNorHandledAndNamesTheClosest() {
		this.runner
			.withPropertyValues("delayed-tasks.producer.declared-queues-only=true",
					"delayed-tasks.queues.ledgers.concurrency=2")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				assertThatExceptionOfType(InvalidTaskRequestException.class)
					.isThrownBy(() -> scheduler.schedule("payment-reminder", new Reminder("r-1"), Duration.ZERO))
					.withMessage("Queue 'payment-reminder' is not declared: it is neither under delayed-tasks.queues "
							+ "nor handled by a @DelayedTaskHandler of this application, and "
							+ "delayed-tasks.producer.declared-queues-only is true. Did you mean 'payment-reminders'?");
				assertThatExceptionOfType(InvalidTaskRequestException.class)
					.isThrownBy(() -> scheduler
						.scheduleAll(List.of(TaskRequest.of("ledgers", "ok"), TaskRequest.of("ledger", "typo"))))
					.withMessageContaining("Did you mean 'ledgers'?");
				assertThatExceptionOfType(InvalidTaskRequestException.class)
					.isThrownBy(() -> scheduler.enqueue("shipping", "x"))
					.withMessageEndingWith("Known queues: 'ledgers', 'payment-reminders'.");
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				assertThat(redis.keys(this.redis.keyPrefix() + ":*"))
					.as("nothing written for refused requests, not even the valid one of the batch")
					.noneMatch((key) -> key.contains("{ledger") || key.contains("{payment-reminder:")
							|| key.contains("{shipping"));
				assertThat(context.getBean(QueueIndex.class).queues()).doesNotContain("payment-reminder", "shipping",
						"ledger", "ledgers");
				// Declared and handled queues are accepted.
				assertThat(scheduler.schedule("ledgers", "ok", Duration.ofHours(1))).isNotNull();
				scheduler.schedule(HANDLED, new Reminder("r-2"), Duration.ZERO);
				Reminders reminders = context.getBean(Reminders.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> reminders.ran.contains("r-2"));
			});
	}

	@Test
	void aQueueDeclaredWithoutOverridesIsDeclared() {
		this.runner
			.withPropertyValues("delayed-tasks.producer.declared-queues-only=true", "delayed-tasks.queues.audit=")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(QueueDeclarations.class).declared()).containsExactly("audit");
				assertThat(context.getBean(DelayedTaskScheduler.class).schedule("audit", "x", Duration.ofHours(1)))
					.isNotNull();
			});
	}

	@Test
	void aProducerOnlyInstanceKnowsOnlyTheDeclaredNames() {
		this.runner
			.withPropertyValues("delayed-tasks.worker.enabled=false",
					"delayed-tasks.producer.declared-queues-only=true", "delayed-tasks.queues.invoices.concurrency=1")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				assertThatExceptionOfType(InvalidTaskRequestException.class)
					.isThrownBy(() -> scheduler.schedule(HANDLED, new Reminder("r-3"), Duration.ZERO))
					.withMessageContaining("Queue 'payment-reminders' is not declared");
				assertThat(scheduler.schedule("invoices", "x", Duration.ofHours(1))).isNotNull();
			});
	}

	@Test
	void withoutDeclaredOnlyAnUnknownQueueIsWarnedAboutOnceAndAccepted(CapturedOutput output) {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId first = scheduler.schedule("payment-reminder", new Reminder("r-4"), Duration.ofHours(1));
			scheduler.schedule("payment-reminder", new Reminder("r-5"), Duration.ofHours(1));
			scheduler.schedule(HANDLED, new Reminder("r-6"), Duration.ofHours(1));
			assertThat(scheduler.find("payment-reminder", first)).isPresent();
			String warning = "Queue 'payment-reminder' is neither declared under delayed-tasks.queues nor handled by "
					+ "a @DelayedTaskHandler of this application: its tasks wait until some instance handles it. "
					+ "Did you mean 'payment-reminders'?";
			assertThat(output.getOut().split(Pattern.quote(warning), -1)).hasSize(2);
			assertThat(output).doesNotContain("Queue 'payment-reminders' is neither");
		});
	}

	@Test
	void aTypedHandleSchedulesToItsQueueWithItsPayloadType() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskQueue<Reminder> reminders = scheduler.queue(HANDLED, Reminder.class);
			assertThat(reminders.name()).isEqualTo(HANDLED);
			assertThat(reminders.payloadType()).isEqualTo(Reminder.class);
			TaskId later = reminders.schedule(new Reminder("r-7"), Duration.ofHours(1));
			assertThat(reminders.find(later)).isPresent();
			assertThat(reminders.reschedule(later, Duration.ofHours(2))).isTrue();
			TaskId now = reminders.submit(reminders.request(new Reminder("r-8")).id("reminder-8")).id();
			assertThat(now).isEqualTo(TaskId.of("reminder-8"));
			assertThat(reminders.scheduleAll(List.of(reminders.request(new Reminder("r-9"))))).hasSize(1);
			Reminders handler = context.getBean(Reminders.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> handler.ran.containsAll(List.of("r-8", "r-9")));
			assertThat(reminders.cancel(later)).isTrue();
			assertThat(reminders.find(later)).isEmpty();
		});
	}

	@Test
	void aTypedHandleRefusesAPayloadTypeItsHandlerCannotRead() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			assertThatExceptionOfType(InvalidTaskRequestException.class)
				.isThrownBy(() -> scheduler.queue(HANDLED, String.class))
				.withMessageStartingWith("Queue 'payment-reminders' is handled by ")
				.withMessageContaining("which takes a " + Reminder.class.getName() + ", not a java.lang.String");
			assertThatExceptionOfType(InvalidTaskRequestException.class)
				.isThrownBy(() -> scheduler.queue(HANDLED, Object.class))
				.withMessage("Queue 'payment-reminders' is handled by @DelayedTaskHandler "
						+ "queueDeclarationsIntegrationTests.Reminders.remind, which takes a "
						+ Reminder.class.getName() + ", not a java.lang.Object: use the handler's payload type");
		});
	}

	@Test
	@SuppressWarnings({ "unchecked", "rawtypes" })
	void aTypedHandleRefusesWhatItsTypesCannotCatch() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskQueue raw = scheduler.queue(HANDLED, Reminder.class);
			assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> raw.enqueue("not a reminder"))
				.withMessage("Payload of a task for queue 'payment-reminders' is a java.lang.String, not a "
						+ Reminder.class.getName());
			TaskQueue<Reminder> reminders = raw;
			assertThatExceptionOfType(InvalidTaskRequestException.class)
				.isThrownBy(() -> reminders.submit(TaskRequest.of("invoices", new Reminder("r-10"))))
				.withMessage("Request for queue 'invoices' was given to the TaskQueue of queue 'payment-reminders': "
						+ "make it with request(payload)");
			assertThatExceptionOfType(InvalidTaskRequestException.class)
				.isThrownBy(() -> scheduler.queue("bad name", Reminder.class))
				.withMessageStartingWith("Queue name 'bad name' is invalid");
			assertThatExceptionOfType(InvalidTaskRequestException.class)
				.isThrownBy(() -> scheduler.queue(HANDLED, int.class))
				.withMessageContaining("use its wrapper class");
		});
	}

	@Test
	void aTypedHandleOfAnUndeclaredQueueFailsOnFirstUseWhenOnlyDeclaredQueuesAreAllowed() {
		this.runner.withPropertyValues("delayed-tasks.producer.declared-queues-only=true").run((context) -> {
			TaskQueue<String> typo = context.getBean(DelayedTaskScheduler.class)
				.queue("payment-reminder", String.class);
			assertThatExceptionOfType(InvalidTaskRequestException.class)
				.isThrownBy(() -> typo.schedule("x", Duration.ofHours(1)))
				.withMessageContaining("Did you mean 'payment-reminders'?");
		});
	}

	record Reminder(String name) {
	}

	@Configuration(proxyBeanMethods = false)
	static class Reminders {

		final List<String> ran = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = HANDLED)
		void remind(Reminder reminder) {
			this.ran.add(reminder.name());
		}

	}

}
