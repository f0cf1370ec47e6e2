package dev.delayedtasks.actuate;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.DeadLetterDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.QueueDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.QueueDetailDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.QueuesDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.TaskDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpointWebExtension.RefusalDescriptor;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksEndpointAutoConfiguration;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The {@code delayedtasks} endpoint's operations called as Java methods on a real Redis
 * with a real handler (the HTTP mapping is tested in the sample application): reads with
 * counts, handlers, timer owner and dead letters but never payloads; writes that pause,
 * resume, redrive, cancel and purge; {@code null} for unknown queues and tasks;
 * {@link InvalidEndpointRequestException} for invalid names and actions.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DelayedTasksEndpointIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final String SECRET = "s3cr3t-payload-value";

	private final ApplicationContextRunner runner;

	private final String keyPrefix;

	DelayedTasksEndpointIntegrationTests(TestRedis redis) {
		this.keyPrefix = redis.keyPrefix();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksEndpointAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"management.endpoints.web.exposure.include=delayedtasks")
			.withUserConfiguration(EndpointHandler.class);
	}

	@Test
	void queuesListsEveryQueueWithCountsHandlersAndTimerOwner() {
		String queue = "e-list";
		String idle = "e-list-idle";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			TaskId dead = scheduler.enqueue(queue, new Job("fail", SECRET));
			scheduler.enqueue(idle, "ready 1");
			scheduler.enqueue(idle, "ready 2");
			Instant before = Instant.now();
			scheduler.schedule(idle, "later", Duration.ofHours(1));
			awaitDeadLetters(context, queue, 1);
			QueueDescriptor handled = await().atMost(WAIT)
				.until(() -> describe(endpoint, queue), (descriptor) -> descriptor.timerOwner() != null);
			assertThat(handled.dead()).isEqualTo(1);
			assertThat(handled.ready()).isZero();
			assertThat(handled.active()).isZero();
			assertThat(handled.scheduled()).isZero();
			assertThat(handled.paused()).isFalse();
			assertThat(handled.counters()).containsEntry("deadLettered", 1L);
			assertThat(handled.handlers()).singleElement().satisfies((handler) -> {
				assertThat(handler.id()).isEqualTo(queue + "-handler");
				assertThat(handler.concurrency()).isEqualTo(2);
				assertThat(handler.activeTasks()).isZero();
				assertThat(handler.running()).isTrue();
				assertThat(handler.timerOwner()).isTrue();
			});
			QueueDescriptor idleQueue = describe(endpoint, idle);
			assertThat(idleQueue.ready()).isEqualTo(2);
			assertThat(idleQueue.scheduled()).isEqualTo(1);
			assertThat(idleQueue.handlers()).isEmpty();
			assertThat(idleQueue.timerOwner()).isNull();
			assertThat(idleQueue.nextDueAt()).isBetween(before.plus(Duration.ofMinutes(59)),
					Instant.now().plus(Duration.ofMinutes(61)));
			assertThat(idleQueue.oldestReadyAgeMillis()).isGreaterThanOrEqualTo(0);
			assertThat(endpoint.queues().queues()).extracting(QueueDescriptor::name).contains(queue, idle);
			assertThat(json(context, endpoint.queues())).doesNotContain(SECRET);
			assertThat(scheduler.find(queue, dead)).map(TaskInfo::state).hasValue(TaskState.DEAD);
		});
	}

	@Test
	void queueShowsItsNewestDeadLettersButNeverPayloads() {
		String queue = "e-dead";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			List<TaskId> ids = new ArrayList<>();
			// The first and the last are dead-lettered apart from the others.
			for (int i = 0; i < 22; i++) {
				if (i == 1 || i == 21) {
					awaitDeadLetters(context, queue, i);
					Thread.sleep(20);
				}
				ids.add(scheduler.enqueue(queue, new Job("fail", SECRET + "-" + i)));
			}
			awaitDeadLetters(context, queue, 22);
			QueueDetailDescriptor detail = endpoint.queue(queue);
			assertThat(detail).isNotNull();
			assertThat(detail.queue().name()).isEqualTo(queue);
			assertThat(detail.queue().dead()).isEqualTo(22);
			List<DeadLetterDescriptor> letters = detail.deadLetters();
			assertThat(letters).hasSize(20);
			assertThat(letters.get(0).id()).isEqualTo(ids.get(21).value());
			assertThat(letters).extracting(DeadLetterDescriptor::id).doesNotContain(ids.get(0).value());
			assertThat(letters).extracting(DeadLetterDescriptor::deadAt).isSortedAccordingTo((a, b) -> b.compareTo(a));
			assertThat(letters).allSatisfy((letter) -> {
				assertThat(letter.reason()).isEqualTo("non-retryable");
				assertThat(letter.exceptionType()).isEqualTo(NonRetryableTaskException.class.getName());
				assertThat(letter.message()).isEqualTo("refused");
				assertThat(letter.attempts()).isEqualTo(1);
				assertThat(letter.deadAt()).isNotNull();
			});
			assertThat(json(context, detail)).doesNotContain(SECRET).doesNotContain("payload");
			assertThat(json(context, endpoint.task(queue, ids.get(3).value()))).doesNotContain(SECRET);
		});
	}

	@Test
	void jsonShowsEverySpelledOutCounterTaskIdsAsStringsAndAPausedQueue() {
		String queue = "e-json";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			TaskId dead = scheduler.enqueue(queue, new Job("fail", SECRET));
			TaskId later = scheduler.schedule(queue, new Job("succeed", SECRET), Duration.ofHours(1));
			awaitDeadLetters(context, queue, 1);
			assertThat(endpoint.queueAction(queue, "pause", null, null, null)).isNotNull();
			JsonNode detail = tree(context, endpoint.queue(queue));
			JsonNode described = detail.get("queue");
			assertThat(described.get("paused").asBoolean()).isTrue();
			JsonNode counters = described.get("counters");
			assertThat(counters.propertyNames()).containsExactly("created", "promoted", "claimed", "succeeded",
					"retried", "deadLettered", "reaped", "recovered", "staleCompletions", "cancelled", "redriven",
					"purged", "corrupt", "expired", "setAsideByKey", "orphanedIndexEntries", "staleReadyEntries",
					"lastFencingNumber");
			assertThat(counters.get("created").asLong()).isEqualTo(2);
			assertThat(counters.get("claimed").asLong()).isEqualTo(1);
			assertThat(counters.get("deadLettered").asLong()).isEqualTo(1);
			assertThat(counters.get("succeeded").asLong()).isZero();
			JsonNode letter = detail.get("deadLetters").get(0);
			assertThat(letter.get("id").isString()).isTrue();
			assertThat(letter.get("id").asString()).isEqualTo(dead.value());
			assertThat(letter.get("reason").asString()).isEqualTo(FailureReason.NON_RETRYABLE.value());
			assertThat(tree(context, endpoint.task(queue, later.value())).get("id").asString())
				.isEqualTo(later.value());
			// The library's own records that hold a TaskId render it as a string too.
			JsonNode deadLetter = tree(context, context.getBean(DeadLetters.class).list(queue, 1).get(0));
			assertThat(deadLetter.get("id").isString()).isTrue();
			assertThat(deadLetter.get("id").asString()).isEqualTo(dead.value());
			JsonNode task = tree(context, scheduler.find(queue, later).orElseThrow());
			assertThat(task.get("id").asString()).isEqualTo(later.value());
			assertThat(endpoint.queueAction(queue, "resume", null, null, null)).isNotNull();
			assertThat(tree(context, endpoint.queue(queue)).get("queue").get("paused").asBoolean()).isFalse();
			assertThat(json(context, endpoint.queues())).doesNotContain(SECRET);
		});
	}

	@Test
	void queueShowsTheBoundedStackTraceOfADeadLetterWithoutTheMessagesOfItsCauses() {
		String queue = "e-trace";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			scheduler.enqueue(queue, new Job("fail-with-causes", SECRET));
			awaitDeadLetters(context, queue, 1);
			QueueDetailDescriptor detail = endpoint.queue(queue);
			assertThat(detail).isNotNull();
			DeadLetterDescriptor letter = detail.deadLetters().get(0);
			assertThat(letter.message()).isEqualTo("refused");
			assertThat(letter.stackTrace()).startsWith(NonRetryableTaskException.class.getName() + "\n\tat ")
				.contains(EndpointHandler.class.getName() + ".handle(")
				.contains("\nCaused by: " + IllegalStateException.class.getName() + "\n")
				.contains("\nCaused by: " + IOException.class.getName() + "\n")
				.hasSizeLessThanOrEqualTo(4096)
				.doesNotContain(SECRET);
			assertThat(json(context, detail)).contains("\"stackTrace\":").doesNotContain(SECRET);
		});
	}

	@Test
	void deadSetMembersThatAreNoTaskIdsAreSkippedCountedAndReportedOnce(CapturedOutput output) {
		String queue = "e-bad-member";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			List<TaskId> ids = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				ids.add(scheduler.enqueue(queue, new Job("fail", SECRET)));
			}
			awaitDeadLetters(context, queue, 3);
			// Written by someone with the application's Redis credentials, newest of all.
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			String dead = PartitionKeys.of(context.getEnvironment().getProperty("delayed-tasks.key-prefix"), queue)
				.dead();
			redis.opsForZSet().add(dead, "evil}{x y", 9e15);
			for (int i = 0; i < 25; i++) {
				redis.opsForZSet().add(dead, "evil " + i, 8e15 + i);
			}
			QueueDetailDescriptor detail = endpoint.queue(queue);
			assertThat(detail).isNotNull();
			assertThat(detail.deadLetters()).extracting(DeadLetterDescriptor::id)
				.containsExactlyInAnyOrderElementsOf(ids.stream().map(TaskId::value).toList());
			assertThat(detail.unreadableDeadLetters()).isEqualTo(26);
			assertThat(detail.queue().dead()).isEqualTo(29);
			assertThat(json(context, detail)).contains("\"unreadableDeadLetters\":26").doesNotContain("evil");
			assertThat(endpoint.queue(queue).unreadableDeadLetters()).isEqualTo(26);
			String warning = "26 member(s) of the dead letters of queue '" + queue + "' are not task ids";
			assertThat(output.getOut().lines().filter((line) -> line.contains(warning))).as("reported once a minute")
				.hasSize(1);
			assertThat(output.getOut()).doesNotContain("evil");
			assertThat(context.getBean(DeadLetters.class).list(queue, 2)).hasSize(2);
			assertThat(endpoint.purge(queue)).isEqualTo(new ActionDescriptor(queue, null, "purge", 29));
			assertThat(endpoint.queue(queue).unreadableDeadLetters()).isZero();
		});
	}

	@Test
	void taskDescribesOneTaskWithoutItsPayload() {
		String queue = "e-task";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			TaskId later = scheduler.schedule(queue, new Job("succeed", SECRET), Duration.ofHours(1));
			TaskId dead = scheduler.enqueue(queue, new Job("fail", SECRET));
			awaitDeadLetters(context, queue, 1);
			TaskDescriptor scheduled = endpoint.task(queue, later.value());
			assertThat(scheduled).isNotNull();
			assertThat(scheduled.id()).isEqualTo(later.value());
			assertThat(scheduled.queue()).isEqualTo(queue);
			assertThat(scheduled.state()).isEqualTo("SCHEDULED");
			assertThat(scheduled.failures()).isZero();
			assertThat(scheduled.deliveries()).isZero();
			assertThat(scheduled.maxAttempts()).isEqualTo(4);
			assertThat(scheduled.dueAt()).isAfter(scheduled.createdAt().plus(Duration.ofMinutes(59)));
			assertThat(scheduled.lastError()).isNull();
			TaskDescriptor deadLetter = endpoint.task(queue, dead.value());
			assertThat(deadLetter).isNotNull();
			assertThat(deadLetter.state()).isEqualTo("DEAD");
			assertThat(deadLetter.failures()).isEqualTo(1);
			assertThat(deadLetter.deliveries()).isEqualTo(1);
			assertThat(deadLetter.lastError())
				.isEqualTo("non-retryable: " + NonRetryableTaskException.class.getName() + ": refused");
			assertThat(json(context, scheduled) + json(context, deadLetter)).doesNotContain(SECRET);
		});
	}

	@Test
	void taskShowsHowAnEndedTaskEndedWithoutItsResult() {
		String queue = "e-outcome";
		this.runner
			.withPropertyValues("test.queue=" + queue, "delayed-tasks.queues." + queue + ".results.retention=10m")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
				TaskId succeeded = scheduler.enqueue(queue, new Job("return-secret", SECRET));
				TaskId dead = scheduler.enqueue(queue, new Job("fail", SECRET));
				TaskId cancelled = scheduler.schedule(queue, new Job("succeed", SECRET), Duration.ofHours(1));
				scheduler.cancel(queue, cancelled);
				awaitDeadLetters(context, queue, 1);
				await().atMost(Duration.ofSeconds(10)).until(() -> scheduler.outcome(queue, succeeded).isPresent());

				TaskDescriptor ended = endpoint.task(queue, succeeded.value());
				assertThat(ended).isNotNull();
				assertThat(ended.state()).isEqualTo("ENDED");
				assertThat(ended.dueAt()).isNull();
				assertThat(ended.outcome()).isNotNull();
				assertThat(ended.outcome().kind()).isEqualTo("SUCCEEDED");
				assertThat(ended.outcome().runs()).isEqualTo(1);
				assertThat(ended.outcome().result()).isTrue();
				TaskDescriptor deadLetter = endpoint.task(queue, dead.value());
				assertThat(deadLetter.state()).isEqualTo("DEAD");
				assertThat(deadLetter.outcome().kind()).isEqualTo("DEAD_LETTERED");
				assertThat(deadLetter.outcome().reason()).isEqualTo("non-retryable");
				assertThat(deadLetter.outcome().error())
					.isEqualTo(NonRetryableTaskException.class.getName() + ": refused");
				assertThat(deadLetter.outcome().result()).isFalse();
				assertThat(endpoint.task(queue, cancelled.value()).outcome().kind()).isEqualTo("CANCELLED");
				assertThat(json(context, ended) + json(context, deadLetter)).doesNotContain(SECRET);
			});
	}

	@Test
	void unknownQueuesAndTasksAnswerNull() {
		String queue = "e-unknown";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			context.getBean(DelayedTaskScheduler.class).schedule("e-unknown-other", "x", Duration.ofHours(1));
			// A queue with a handler here is known before anything was scheduled on it.
			assertThat(endpoint.queue(queue)).isNotNull();
			assertThat(endpoint.queue("e-never-seen")).isNull();
			assertThat(endpoint.task(queue, "no-such-task")).isNull();
			assertThat(endpoint.task("e-never-seen", "no-such-task")).isNull();
			assertThat(endpoint.queueAction("e-never-seen", "pause", null, null, null)).isNull();
			assertThat(endpoint.queueAction("e-never-seen", "redrive", null, null, null)).isNull();
			assertThat(endpoint.taskAction(queue, "no-such-task", "cancel")).isNull();
			assertThat(endpoint.taskAction(queue, "no-such-task", "redrive")).isNull();
			assertThat(endpoint.purge("e-never-seen")).isNull();
			assertThat(context.getBean(QueueControl.class).isPaused("e-never-seen")).isFalse();
			DelayedTasksEndpointWebExtension web = context.getBean(DelayedTasksEndpointWebExtension.class);
			assertThat(web.queueAction("e-never-seen", "pause", null, null, null).getStatus())
				.isEqualTo(WebEndpointResponse.STATUS_NOT_FOUND);
			assertThat(web.taskAction(queue, "no-such-task", "cancel").getStatus())
				.isEqualTo(WebEndpointResponse.STATUS_NOT_FOUND);
			assertThat(web.purge("e-never-seen").getStatus()).isEqualTo(WebEndpointResponse.STATUS_NOT_FOUND);
			WebEndpointResponse<ActionDescriptor> purged = web.purge(queue);
			assertThat(purged.getStatus()).isEqualTo(WebEndpointResponse.STATUS_OK);
			assertThat(purged.getBody()).isEqualTo(new ActionDescriptor(queue, null, "purge", 0));
		});
	}

	@Test
	void invalidQueueNamesAndTaskIdsAreInvalidRequests() {
		String queue = "e-invalid";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			DelayedTasksEndpointWebExtension web = context.getBean(DelayedTasksEndpointWebExtension.class);
			String tooLong = "q".repeat(65);
			assertInvalid(() -> endpoint.queue("bad name"), "Queue name 'bad name' is invalid");
			assertInvalid(() -> endpoint.queue("{braces}"), "Queue name '{braces}' is invalid");
			assertInvalid(() -> endpoint.queue(tooLong), "65 characters");
			assertInvalid(() -> endpoint.task("bad name", "task-1"), "Queue name 'bad name' is invalid");
			assertInvalid(() -> endpoint.task(queue, "bad id!"), "Task id 'bad id!' is invalid");
			assertInvalid(() -> endpoint.queueAction("bad name", "pause", null, null, null),
					"Queue name 'bad name' is invalid");
			assertInvalid(() -> endpoint.taskAction("bad name", "task-1", "cancel"),
					"Queue name 'bad name' is invalid");
			assertInvalid(() -> endpoint.taskAction(queue, "bad id!", "cancel"), "Task id 'bad id!' is invalid");
			assertInvalid(() -> endpoint.purge("bad name"), "Queue name 'bad name' is invalid");
			assertInvalid(() -> web.queueAction("bad name", "pause", null, null, null),
					"Queue name 'bad name' is invalid");
			assertInvalid(() -> web.purge("bad name"), "Queue name 'bad name' is invalid");
		});
	}

	@Test
	void limitsActionChangesOneLimitAtATimeForEveryInstanceAndTheQueueShowsThemWithTheirUse() {
		String queue = "e-limits";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			QueueControl control = context.getBean(QueueControl.class);
			context.getBean(DelayedTaskScheduler.class).schedule(queue, "x", Duration.ofHours(1));
			JsonNode none = tree(context, endpoint.queue(queue)).get("queue").get("limits");
			assertThat(none.get("rateLimit").isNull()).isTrue();
			assertThat(none.get("globalConcurrency").isNull()).isTrue();

			assertThat(endpoint.queueAction(queue, "limits", "20/1s", null, null)).isNotNull();
			assertThat(control.limits(queue)).isEqualTo(new QueueLimits(RateLimit.parse("20/1s"), null));
			assertThat(endpoint.queueAction(queue, "limits", null, 5, null)).isNotNull();
			assertThat(control.limits(queue)).isEqualTo(new QueueLimits(RateLimit.parse("20/1s"), 5));
			JsonNode limits = tree(context, endpoint.queue(queue)).get("queue").get("limits");
			assertThat(limits.get("rateLimit").asString()).isEqualTo("20/1s");
			assertThat(limits.get("globalConcurrency").asInt()).isEqualTo(5);
			assertThat(limits.get("startsInRateWindow").asLong()).isZero();
			assertThat(limits.get("leased").asLong()).isZero();

			assertThat(limits.get("keyRateLimit").isNull()).isTrue();
			assertThat(endpoint.queueAction(queue, "limits", null, null, "3/1m")).isNotNull();
			assertThat(control.limits(queue))
				.isEqualTo(new QueueLimits(RateLimit.parse("20/1s"), 5, RateLimit.parse("3/1m")));
			assertThat(tree(context, endpoint.queue(queue)).get("queue").get("limits").get("keyRateLimit").asString())
				.isEqualTo("3/1m");

			assertThat(endpoint.queueAction(queue, "limits", "none", null, "none")).isNotNull();
			assertThat(control.limits(queue)).isEqualTo(new QueueLimits(null, 5));
			assertThat(endpoint.queueAction(queue, "limits", null, 0, null)).isNotNull();
			assertThat(control.limits(queue)).isEqualTo(QueueLimits.NONE);

			assertInvalid(() -> endpoint.queueAction(queue, "limits", "0/1s", null, null),
					"'0/1s' is not a rate limit");
			assertInvalid(() -> endpoint.queueAction(queue, "limits", "10/1x", null, null),
					"'10/1x' is not a rate limit");
			assertInvalid(() -> endpoint.queueAction(queue, "limits", null, -1, null), "globalConcurrency");
			assertInvalid(() -> endpoint.queueAction(queue, "limits", null, null, "0/1s"), "keyRateLimit");
			assertInvalid(() -> endpoint.queueAction(queue, "limits", null, null, null), "needs rateLimit");
			assertThat(control.limits(queue)).isEqualTo(QueueLimits.NONE);
		});
	}

	@Test
	void unknownActionsAreInvalidRequests() {
		String queue = "e-action";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			TaskId id = context.getBean(DelayedTaskScheduler.class).schedule(queue, "x", Duration.ofHours(1));
			assertInvalid(() -> endpoint.queueAction(queue, "explode", null, null, null), "Unknown action 'explode'");
			assertInvalid(() -> endpoint.queueAction(queue, "cancel", null, null, null), "Unknown action 'cancel'");
			assertInvalid(() -> endpoint.taskAction(queue, id.value(), "explode"), "Unknown action 'explode'");
			assertInvalid(() -> endpoint.taskAction(queue, id.value(), "pause"), "Unknown action 'pause'");
			assertInvalid(() -> endpoint.taskAction(queue, "no-such-task", "explode"), "Unknown action 'explode'");
			// An invalid request is invalid whether or not the queue exists.
			assertInvalid(() -> endpoint.queueAction("e-never-seen", "explode", null, null, null),
					"Unknown action 'explode'");
			assertThat(context.getBean(DelayedTaskScheduler.class).find(queue, id)).map(TaskInfo::state)
				.hasValue(TaskState.SCHEDULED);
		});
	}

	@Test
	void pauseStopsClaimsAndResumeRunsWhatWaited() {
		String queue = "e-pause";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			EndpointHandler handler = context.getBean(EndpointHandler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			QueueControl control = context.getBean(QueueControl.class);
			assertThat(endpoint.queueAction(queue, "pause", null, null, null))
				.isEqualTo(new ActionDescriptor(queue, null, "pause", 1));
			assertThat(control.isPaused(queue)).isTrue();
			assertThat(describe(endpoint, queue).paused()).isTrue();
			TaskId ready = scheduler.enqueue(queue, new Job("succeed", "a"));
			TaskId due = scheduler.schedule(queue, new Job("succeed", "b"), Duration.ofMillis(200));
			// Scheduled tasks still become ready while the queue is paused.
			await().atMost(WAIT)
				.untilAsserted(
						() -> assertThat(scheduler.find(queue, due)).map(TaskInfo::state).hasValue(TaskState.READY));
			// Longer than a dispatcher's block (1 s): not
			// claimed on a wake token nor on a block timeout.
			await().during(Duration.ofMillis(1500)).atMost(WAIT).until(handler.runs::isEmpty);
			assertThat(scheduler.find(queue, ready)).map(TaskInfo::state).hasValue(TaskState.READY);
			assertThat(describe(endpoint, queue).ready()).isEqualTo(2);
			assertThat(endpoint.queueAction(queue, "resume", null, null, null))
				.isEqualTo(new ActionDescriptor(queue, null, "resume", 1));
			assertThat(control.isPaused(queue)).isFalse();
			await().atMost(WAIT).until(() -> handler.runs.size() == 2);
			assertThat(handler.runs).extracting(TaskContext::id).containsExactlyInAnyOrder(ready, due);
			assertThat(describe(endpoint, queue).paused()).isFalse();
		});
	}

	@Test
	void redriveOfOneDeadLetterRunsItAgain() {
		String queue = "e-redrive-one";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			EndpointHandler handler = context.getBean(EndpointHandler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			TaskId first = scheduler.enqueue(queue, new Job("fail", "1"));
			TaskId second = scheduler.enqueue(queue, new Job("fail", "2"));
			awaitDeadLetters(context, queue, 2);
			handler.failing = false;
			assertThat(endpoint.taskAction(queue, first.value(), "redrive"))
				.isEqualTo(new ActionDescriptor(queue, first.value(), "redrive", 1));
			await().atMost(WAIT).until(() -> scheduler.find(queue, first).isEmpty());
			// The two ran side by side once; then only the redriven one ran again.
			assertThat(handler.runs).extracting(TaskContext::id).containsExactlyInAnyOrder(first, second, first);
			assertThat(handler.runs.get(2).id()).isEqualTo(first);
			assertThat(context.getBean(DeadLetters.class).count(queue)).isEqualTo(1);
			assertThat(scheduler.find(queue, second)).map(TaskInfo::state).hasValue(TaskState.DEAD);
			// It is no dead letter any more.
			assertThat(endpoint.taskAction(queue, first.value(), "redrive")).isNull();
		});
	}

	@Test
	void redriveOfAQueueRunsAllItsDeadLettersAgain() {
		String queue = "e-redrive-all";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			EndpointHandler handler = context.getBean(EndpointHandler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			for (int i = 0; i < 3; i++) {
				scheduler.enqueue(queue, new Job("fail", Integer.toString(i)));
			}
			awaitDeadLetters(context, queue, 3);
			handler.failing = false;
			assertThat(endpoint.queueAction(queue, "redrive", null, null, null))
				.isEqualTo(new ActionDescriptor(queue, null, "redrive", 3));
			await().atMost(WAIT).until(() -> handler.runs.size() == 6);
			await().atMost(WAIT).until(() -> describe(endpoint, queue).counters().getOrDefault("succeeded", 0L) == 3);
			assertThat(context.getBean(DeadLetters.class).count(queue)).isZero();
			assertThat(endpoint.queueAction(queue, "redrive", null, null, null))
				.isEqualTo(new ActionDescriptor(queue, null, "redrive", 0));
		});
	}

	@Test
	void cancelDeletesAScheduledTask() {
		String queue = "e-cancel";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			TaskId id = scheduler.schedule(queue, new Job("succeed", "x"), Duration.ofHours(1));
			TaskId kept = scheduler.schedule(queue, new Job("succeed", "y"), Duration.ofHours(1));
			assertThat(endpoint.taskAction(queue, id.value(), "cancel"))
				.isEqualTo(new ActionDescriptor(queue, id.value(), "cancel", 1));
			assertThat(scheduler.find(queue, id)).isEmpty();
			assertThat(endpoint.task(queue, id.value())).isNull();
			assertThat(endpoint.taskAction(queue, id.value(), "cancel")).isNull();
			assertThat(scheduler.find(queue, kept)).map(TaskInfo::state).hasValue(TaskState.SCHEDULED);
			assertThat(describe(endpoint, queue).scheduled()).isEqualTo(1);
		});
	}

	@Test
	void runMakesAScheduledTaskDueNowAndItRuns() {
		String queue = "e-run";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			TaskId id = scheduler.schedule(queue, new Job("succeed", "x"), Duration.ofHours(1));
			TaskId kept = scheduler.schedule(queue, new Job("succeed", "y"), Duration.ofHours(1));
			assertThat(endpoint.taskAction(queue, id.value(), "run"))
				.isEqualTo(new ActionDescriptor(queue, id.value(), "run", 1));
			await().atMost(WAIT).until(() -> scheduler.find(queue, id).isEmpty());
			assertThat(scheduler.find(queue, kept)).map(TaskInfo::state).hasValue(TaskState.SCHEDULED);
			assertThat(endpoint.taskAction(queue, id.value(), "run")).as("a task that has run").isNull();
			TaskId ready = scheduler.enqueue(queue + "-idle", new Job("succeed", "z"));
			Instant due = scheduler.find(queue + "-idle", ready).orElseThrow().dueAt();
			assertThat(endpoint.taskAction(queue + "-idle", ready.value(), "run")).as("a ready task").isNull();
			assertThat(scheduler.find(queue + "-idle", ready)).map(TaskInfo::dueAt).hasValue(due);
		});
	}

	@Test
	void purgeDeletesEveryDeadLetterOfTheQueue() {
		String queue = "e-purge";
		this.runner.withPropertyValues("test.queue=" + queue).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			TaskId dead = scheduler.enqueue(queue, new Job("fail", "1"));
			scheduler.enqueue(queue, new Job("fail", "2"));
			TaskId waiting = scheduler.schedule(queue, new Job("succeed", "3"), Duration.ofHours(1));
			awaitDeadLetters(context, queue, 2);
			assertThat(endpoint.purge(queue)).isEqualTo(new ActionDescriptor(queue, null, "purge", 2));
			assertThat(context.getBean(DeadLetters.class).count(queue)).isZero();
			assertThat(endpoint.queue(queue).deadLetters()).isEmpty();
			assertThat(describe(endpoint, queue).dead()).isZero();
			assertThat(scheduler.find(queue, dead)).isEmpty();
			assertThat(scheduler.find(queue, waiting)).map(TaskInfo::state).hasValue(TaskState.SCHEDULED);
			assertThat(endpoint.purge(queue)).isEqualTo(new ActionDescriptor(queue, null, "purge", 0));
		});
	}

	@Test
	void thousandsOfQueueNamesListAtMostMaxQueuesAndCountTheRest() {
		String handled = "e-bounded";
		// An index of its own: the other tests' queues are not in it.
		this.runner
			.withPropertyValues("delayed-tasks.key-prefix=" + this.keyPrefix + ":own", "test.queue=" + handled,
					"delayed-tasks.monitoring.max-queues=10", "delayed-tasks.queues.zz-declared.concurrency=1")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
				// The attack: a queue name per user.
				int names = 1200;
				for (int i = 0; i < names; i++) {
					scheduler.schedule(String.format("e-user-%04d", i), "job", Duration.ofHours(1));
				}
				scheduler.schedule("zz-declared", "job", Duration.ofHours(1));

				QueuesDescriptor list = endpoint.queues();

				// Before, all 1,202 queues, each read with its own script call.
				assertThat(list.queues()).extracting(QueueDescriptor::name)
					.hasSize(10)
					.contains(handled, "zz-declared", "e-user-0000", "e-user-0007")
					.doesNotContain("e-user-0008");
				assertThat(list.knownQueues()).isEqualTo(names + 2);
				assertThat(list.unreportedQueues()).isEqualTo(names + 2 - 10);
				assertThat(json(context, list)).hasSizeLessThan(10_000);
				// A queue left out of the list is still known, one at a time.
				assertThat(endpoint.queue("e-user-1199")).isNotNull();
				assertThat(endpoint.queue("e-user-1199").queue().scheduled()).isEqualTo(1);
			});
	}

	@Test
	void removeTakesAnEmptyUnhandledQueueOutOfTheIndexAndRefusesOthersSayingWhy() {
		String handled = "e-remove-handled";
		String queue = "e-remove";
		this.runner.withPropertyValues("test.queue=" + handled).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			DelayedTasksEndpointWebExtension web = context.getBean(DelayedTasksEndpointWebExtension.class);
			TaskId waiting = scheduler.schedule(queue, "job", Duration.ofHours(1));

			assertInvalid(() -> endpoint.queueAction(queue, "remove", null, null, null),
					"Queue 'e-remove' was not removed: it is not empty (scheduled 1, ready 0, active 0, dead 0)");
			WebEndpointResponse<?> notEmpty = web.queueAction(queue, "remove", null, null, null);
			assertThat(notEmpty.getStatus()).isEqualTo(409);
			assertThat(notEmpty.getBody()).isInstanceOfSatisfying(RefusalDescriptor.class, (refusal) -> {
				assertThat(refusal.reason()).isEqualTo("NOT_EMPTY");
				assertThat(refusal.scheduled()).isEqualTo(1);
				assertThat(refusal.message()).contains("not empty");
			});
			WebEndpointResponse<?> handledHere = web.queueAction(handled, "remove", null, null, null);
			assertThat(handledHere.getStatus()).isEqualTo(409);
			assertThat(((RefusalDescriptor) handledHere.getBody()).message())
				.isEqualTo("Queue 'e-remove-handled' was not removed: this instance has a handler for it "
						+ "(e-remove-handled-handler); remove the handler first");
			assertThat(endpoint.queue(queue)).isNotNull();

			assertThat(scheduler.cancel(queue, waiting)).isTrue();
			WebEndpointResponse<?> removed = web.queueAction(queue, "remove", null, null, null);
			assertThat(removed.getStatus()).isEqualTo(WebEndpointResponse.STATUS_OK);
			assertThat(removed.getBody()).isEqualTo(new ActionDescriptor(queue, null, "remove", 1));
			assertThat(endpoint.queue(queue)).isNull();
			assertThat(endpoint.queues().queues()).extracting(QueueDescriptor::name).doesNotContain(queue);
			assertThat(web.queueAction(queue, "remove", null, null, null).getStatus())
				.isEqualTo(WebEndpointResponse.STATUS_NOT_FOUND);
			assertThat(endpoint.queueAction(queue, "remove", null, null, null)).isNull();
			// Scheduling to it again makes it known again.
			scheduler.schedule(queue, "job", Duration.ofHours(1));
			assertThat(endpoint.queue(queue)).isNotNull();
		});
	}

	private static QueueDescriptor describe(DelayedTasksEndpoint endpoint, String queue) {
		return endpoint.queues()
			.queues()
			.stream()
			.filter((descriptor) -> descriptor.name().equals(queue))
			.findFirst()
			.orElseThrow();
	}

	private static void awaitDeadLetters(AssertableApplicationContext context, String queue, long count) {
		DeadLetters deadLetters = context.getBean(DeadLetters.class);
		await().atMost(WAIT).until(() -> deadLetters.count(queue) == count);
	}

	private static String json(AssertableApplicationContext context, Object value) {
		return context.getBean(JsonMapper.class).writeValueAsString(value);
	}

	private static JsonNode tree(AssertableApplicationContext context, Object value) {
		return context.getBean(JsonMapper.class).readTree(json(context, value));
	}

	private static void assertInvalid(Executable call, String message) {
		assertThatExceptionOfType(InvalidEndpointRequestException.class).isThrownBy(call::execute)
			.withMessageContaining(message)
			.satisfies((ex) -> assertThat(ex.getReason()).contains(message));
	}

	record Job(String action, String secret) {

	}

	@Configuration(proxyBeanMethods = false)
	static class EndpointHandler {

		final List<TaskContext> runs = new CopyOnWriteArrayList<>();

		volatile boolean failing = true;

		@DelayedTaskHandler(queue = "${test.queue}", id = "${test.queue}-handler", concurrency = "2")
		@Nullable String handle(Job job, TaskContext context) {
			this.runs.add(context);
			if (job.action().equals("fail") && this.failing) {
				throw new NonRetryableTaskException("refused");
			}
			if (job.action().equals("fail-with-causes")) {
				throw new NonRetryableTaskException("refused", new IllegalStateException("lookup of " + job.secret(),
						new IOException("no such row: " + job.secret())));
			}
			// A result is shown as present, never as its value.
			return job.action().equals("return-secret") ? job.secret() : null;
		}

	}

}
