package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueStats;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Task priorities within a queue ({@link TaskRequest#priority(int)}): among a queue's due
 * tasks a claim takes the highest priority first, in the order they became ready within
 * one priority; scheduled tasks still wait for their due time; and a task keeps its
 * priority through everything that puts it back among the ready tasks (a retry, a
 * release, a reaped lease, a redrive, a reschedule, a set-aside for its rate key). The
 * ready tasks of a priority other than 0 wait in {@code ready:5}, {@code ready:-3} and so
 * on, listed in {@code levels}; stats count all of them and removing an empty queue
 * deletes them.
 * <p>
 * A backlog is built while no handler of the queue runs: by a producer-only application
 * context ({@code delayed-tasks.worker.enabled=false}) before the handler's context
 * starts, or while the queue is paused. One handler of concurrency 1 then leases one task
 * at a time, so the order of its leases (their fences) is the order of the claims.
 */
@WithRedis
class PriorityIntegrationTests {

	private static final Duration HOLD = Duration.ofSeconds(1);

	private final TestRedis redis;

	private final ApplicationContextRunner producers;

	private final ApplicationContextRunner workers;

	PriorityIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.producers = ShortLeases.runner(redis, "delayed-tasks.worker.enabled=false");
		this.workers = ShortLeases.runner(redis).withUserConfiguration(PriorityHandler.class);
	}

	@Test
	void aBacklogRunsHighestPriorityFirstAndInScheduleOrderWithinAPriority() {
		String queue = "priority-backlog";
		int perPriority = 5;
		int[] priorities = { 0, -10, 5, 10 };
		RunLog log = new RunLog();
		this.producers.run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			for (int i = 0; i < perPriority; i++) {
				for (int priority : priorities) {
					TaskRequest request = TaskRequest.of(queue, new Job("p" + priority + "-" + i));
					// Priority 0 named or not: the same.
					scheduler.schedule((priority != 0 || i % 2 == 0) ? request.priority(priority) : request);
				}
			}
			worker(queue, log).run((worker) -> {
				await().atMost(Duration.ofSeconds(15)).until(() -> log.finishedCount() == 4 * perPriority);
				List<String> expected = new ArrayList<>();
				for (int priority : new int[] { 10, 5, 0, -10 }) {
					for (int i = 0; i < perPriority; i++) {
						expected.add("p" + priority + "-" + i);
					}
				}
				List<Run> runs = inLeaseOrder(log);
				assertThat(names(runs)).containsExactlyElementsOf(expected);
				assertThat(runs).allSatisfy((run) -> assertThat(run.context().deliveryCount()).isEqualTo(1));
				assertPrioritiesEmpty(worker, queue);
			});
		});
	}

	@Test
	void aPriorityOrdersOnlyDueTasksAndTheHighOneGoesFirstOnceDue() {
		String queue = "priority-due";
		RunLog log = new RunLog();
		worker(queue, log, "test.sleep-ms=150").run((worker) -> {
			DelayedTaskScheduler scheduler = worker.getBean(DelayedTaskScheduler.class);
			TaskId urgent = scheduler
				.schedule(TaskRequest.of(queue, new Job("urgent")).priority(10).delay(Duration.ofMillis(1500)));
			List<TaskRequest> backlog = new ArrayList<>();
			for (int i = 0; i < 20; i++) {
				backlog.add(TaskRequest.of(queue, new Job("p0-" + i)));
			}
			scheduler.scheduleAll(backlog);
			await().atMost(Duration.ofSeconds(20)).until(() -> log.finishedCount() == 21);

			List<Run> runs = inLeaseOrder(log);
			Run urgentRun = only(log, urgent);
			TaskContext context = urgentRun.context();
			assertThat(Duration.between(context.createdAt(), context.dueAt())).as("delay of the priority-10 task")
				.isGreaterThanOrEqualTo(Duration.ofMillis(1500));
			// Not before its due time, in Redis time...
			assertThat(context.startedAt()).as("lease of the priority-10 task").isAfterOrEqualTo(context.dueAt());
			int position = runs.indexOf(urgentRun);
			// ...while the priority-0 tasks ran meanwhile...
			assertThat(position).as("priority-0 tasks leased before it, in %s", names(runs)).isGreaterThanOrEqualTo(5);
			// ...and, once due, before the priority-0 backlog left: no priority-0 task
			// was leased after its due time and before it.
			assertThat(runs.subList(0, position)).allSatisfy((run) -> assertThat(run.context().startedAt())
				.as("lease of %s, before the priority-10 task", name(run))
				.isBeforeOrEqualTo(context.dueAt()));
			assertThat(runs.size() - 1 - position).as("priority-0 tasks leased after it, in %s", names(runs))
				.isGreaterThanOrEqualTo(3);
			assertThat(Duration.between(context.dueAt(), context.startedAt())).as("lateness of the priority-10 task")
				.isLessThan(Duration.ofSeconds(1));
		});
	}

	@ParameterizedTest(name = "retry delay {0}")
	@ValueSource(strings = { "0s", "400ms" })
	void aRetryKeepsItsPriorityAndGoesBeforeLowerPriorityReadyTasks(String retryDelay) {
		String queue = "priority-retry-" + retryDelay;
		RunLog log = new RunLog();
		this.producers.run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			TaskId failing = scheduler.schedule(TaskRequest.of(queue, new Job("fail")).priority(5));
			for (int i = 0; i < 3; i++) {
				scheduler.schedule(TaskRequest.of(queue, new Job("p3-" + i)).priority(3));
			}
			for (int i = 0; i < 6; i++) {
				scheduler.schedule(TaskRequest.of(queue, new Job("p0-" + i)));
			}
			QueueControl control = producer.getBean(QueueControl.class);
			StringRedisTemplate template = producer.getBean(StringRedisTemplate.class);
			String failingTask = keys(queue).task(failing.value());
			worker(queue, log, "test.sleep-ms=100", "test.gated-task=fail",
					"delayed-tasks.queues." + queue + ".retry.delay=" + retryDelay,
					"delayed-tasks.queues." + queue + ".retry.jitter=0s")
				.run((worker) -> {
					// The handler's slot is free once it returns, before its failure is
					// written: the queue is paused meanwhile, so that no claim takes the
					// next task before the retry is recorded.
					await().atMost(Duration.ofSeconds(5)).until(() -> log.size() == 1);
					control.pause(queue);
					worker.getBean(PriorityHandler.class).gate.countDown();
					await().atMost(Duration.ofSeconds(5))
						.until(() -> "1".equals(template.opsForHash().get(failingTask, "a")));
					if (retryDelay.equals("0s")) {
						assertThat(template.opsForList().range(readyKey(keys(queue), 5), 0, -1))
							.containsExactly(failing.value());
					}
					control.resume(queue);
					await().atMost(Duration.ofSeconds(15)).until(() -> log.finishedCount() == 10);
					List<Run> runs = inLeaseOrder(log);
					List<Run> failingRuns = log.of(failing);
					assertThat(failingRuns).extracting((run) -> run.context().attempt()).containsExactly(1, 2);
					assertThat(runs.get(0)).isSameAs(failingRuns.get(0));
					Run retry = failingRuns.get(1);
					// Ready again from its due time: no task of a lower priority was
					// leased after it and before the retry.
					Instant ready = retry.context().dueAt();
					assertThat(runs.subList(0, runs.indexOf(retry)))
						.allSatisfy((run) -> assertThat(run.context().startedAt())
							.as("lease of %s, before the retry ready since %s, in %s", name(run), ready, names(runs))
							.isBeforeOrEqualTo(ready));
					assertThat(runs.indexOf(retry)).as("position of the retry in %s", names(runs))
						.isLessThan(runs.size() - 1);
					if (retryDelay.equals("0s")) {
						assertThat(names(runs)).containsExactly("fail", "fail", "p3-0", "p3-1", "p3-2", "p0-0", "p0-1",
								"p0-2", "p0-3", "p0-4", "p0-5");
					}
					assertPrioritiesEmpty(worker, queue);
				});
		});
	}

	@Test
	void aTaskReleasedByRateLimitedExceptionComesBackAtTheHeadOfItsOwnPriority() {
		String queue = "priority-release";
		RunLog log = new RunLog();
		this.producers.run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			TaskId limited = scheduler.schedule(TaskRequest.of(queue, new Job("limit")).priority(5));
			scheduler.schedule(TaskRequest.of(queue, new Job("p5-a")).priority(5));
			scheduler.schedule(TaskRequest.of(queue, new Job("p5-b")).priority(5));
			scheduler.schedule(TaskRequest.of(queue, new Job("p0-c")));
			scheduler.schedule(TaskRequest.of(queue, new Job("p0-d")));
			QueueControl control = producer.getBean(QueueControl.class);
			worker(queue, log, "test.gated-task=limit").run((worker) -> {
				// The handler's slot is free once it returns, before its outcome is
				// written: the queue is paused meanwhile, so that no claim takes the
				// next task before the release puts the task back.
				await().atMost(Duration.ofSeconds(5)).until(() -> log.size() == 1);
				control.pause(queue);
				worker.getBean(PriorityHandler.class).gate.countDown();
				await().atMost(Duration.ofSeconds(5)).until(() -> heldUntil(worker, queue) > 0);
				long heldUntil = heldUntil(worker, queue);
				// Ready during the hold, of a higher priority: it goes first.
				TaskId urgent = scheduler.schedule(TaskRequest.of(queue, new Job("urgent")).priority(10));
				control.resume(queue);
				await().atMost(HOLD.plusSeconds(10)).until(() -> log.finishedCount() == 6);

				List<Run> runs = inLeaseOrder(log);
				assertThat(names(runs)).containsExactly("limit", "urgent", "limit", "p5-a", "p5-b", "p0-c", "p0-d");
				assertThat(only(log, urgent).context().createdAt().toEpochMilli()).as("scheduled during the hold")
					.isLessThan(heldUntil);
				assertThat(runs.subList(1, runs.size()))
					.allSatisfy((run) -> assertThat(run.context().startedAt().toEpochMilli())
						.as("lease of %s, Redis time", name(run))
						.isGreaterThanOrEqualTo(heldUntil));
				Run again = log.of(limited).get(1);
				assertThat(again.context().attempt()).isEqualTo(1);
				assertThat(again.context().deliveryCount()).isEqualTo(1);
				assertPrioritiesEmpty(worker, queue);
			});
		});
	}

	@Test
	void aTaskWhoseLeaseExpiredIsReapedBackToItsPriorityAndRunsBeforeLowerOnes() {
		String queue = "priority-reaped";
		PartitionKeys keys = keys(queue);
		RunLog log = new RunLog();
		this.producers.run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			for (int i = 0; i < 3; i++) {
				scheduler.schedule(TaskRequest.of(queue, new Job("p0-" + i)));
			}
			TaskId crashed = scheduler.schedule(TaskRequest.of(queue, new Job("crashed")).priority(5));
			// A worker leases the priority-5 task, the highest, and crashes: its lease
			// runs out.
			ClaimBatch claim = producer.getBean(TaskStore.class).claim(queue, 1, "crashed-worker.1");
			assertThat(claim.tasks()).extracting(ClaimedTask::id).containsExactly(crashed);
			QueueControl control = producer.getBean(QueueControl.class);
			control.pause(queue);
			StringRedisTemplate template = producer.getBean(StringRedisTemplate.class);
			worker(queue, log).run((worker) -> {
				// The timer owner of the paused queue reaps the lease after lease and
				// grace.
				await().atMost(ShortLeases.REDELIVERY.plusSeconds(5))
					.untilAsserted(() -> assertThat(template.opsForList().range(readyKey(keys, 5), 0, -1))
						.containsExactly(crashed.value()));
				assertThat(template.opsForZSet().zCard(keys.lease())).isZero();
				assertThat(template.opsForList().range(keys.ready(), 0, -1)).hasSize(3).doesNotContain(crashed.value());
				assertThat(template.opsForHash().get(keys.task(crashed.value()), "pr")).isEqualTo("5");
				assertThat(log.size()).as("runs while paused").isZero();
				control.resume(queue);
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() == 4);
				List<Run> runs = inLeaseOrder(log);
				assertThat(names(runs)).containsExactly("crashed", "p0-0", "p0-1", "p0-2");
				assertThat(runs.get(0).context().deliveryCount()).as("deliveries of the reaped task").isEqualTo(2);
				assertPrioritiesEmpty(worker, queue);
			});
		});
	}

	@Test
	void aRedrivenDeadLetterGoesBackToItsPriorityAndRunsBeforeLowerOnes() {
		String queue = "priority-redrive";
		PartitionKeys keys = keys(queue);
		RunLog log = new RunLog();
		this.producers.run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			StringRedisTemplate template = producer.getBean(StringRedisTemplate.class);
			TaskStore store = producer.getBean(TaskStore.class);
			TaskId dead = scheduler.schedule(TaskRequest.of(queue, new Job("dead")).priority(3));
			ClaimedTask claimed = store.claim(queue, 1, "failing-worker.1").tasks().get(0);
			assertThat(claimed.id()).isEqualTo(dead);
			TaskFailure failure = new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException",
					"boom");
			assertThat(store.fail(queue, claimed.lease(), failure).kind()).isEqualTo(TaskStore.FailOutcome.Kind.DEAD);
			assertThat(template.opsForHash().get(keys.task(dead.value()), "pr")).isEqualTo("3");
			for (int i = 0; i < 3; i++) {
				scheduler.schedule(TaskRequest.of(queue, new Job("p0-" + i)));
			}

			assertThat(producer.getBean(DeadLetters.class).redrive(queue, dead)).isTrue();

			assertThat(template.opsForList().range(readyKey(keys, 3), 0, -1)).containsExactly(dead.value());
			assertThat(template.opsForList().range(keys.ready(), 0, -1)).hasSize(3).doesNotContain(dead.value());
			assertThat(producer.getBean(RedisQueueStats.class).read(queue).ready()).isEqualTo(4);
			worker(queue, log).run((worker) -> {
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() == 4);
				assertThat(names(inLeaseOrder(log))).containsExactly("dead", "p0-0", "p0-1", "p0-2");
				assertPrioritiesEmpty(worker, queue);
			});
		});
	}

	@Test
	void aRescheduledTaskKeepsItsPriority() {
		String queue = "priority-reschedule";
		PartitionKeys keys = keys(queue);
		RunLog log = new RunLog();
		this.producers.run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			StringRedisTemplate template = producer.getBean(StringRedisTemplate.class);
			TaskId later = scheduler
				.schedule(TaskRequest.of(queue, new Job("later")).priority(7).delay(Duration.ofHours(1)));
			for (int i = 0; i < 3; i++) {
				scheduler.schedule(TaskRequest.of(queue, new Job("p0-" + i)));
			}

			assertThat(scheduler.reschedule(queue, later, Duration.ZERO)).isTrue();

			assertThat(template.opsForList().range(readyKey(keys, 7), 0, -1)).containsExactly(later.value());
			assertThat(template.opsForList().range(keys.ready(), 0, -1)).doesNotContain(later.value());
			worker(queue, log).run((worker) -> {
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() == 4);
				assertThat(names(inLeaseOrder(log))).containsExactly("later", "p0-0", "p0-1", "p0-2");
				assertPrioritiesEmpty(worker, queue);
			});
		});
	}

	@Test
	void aTaskSetAsideForItsRateKeyComesBackToItsPriority() {
		String queue = "priority-key";
		RunLog log = new RunLog();
		worker(queue, log, "test.sleep-ms=100", "delayed-tasks.queues." + queue + ".key-rate-limit=1/1s")
			.run((worker) -> {
				QueueLimits configured = new QueueLimits(null, null, RateLimit.parse("1/1s"));
				await().atMost(Duration.ofSeconds(5))
					.until(() -> configured.equals(worker.getBean(QueueControl.class).limits(queue)));
				List<TaskRequest> requests = new ArrayList<>();
				requests.add(TaskRequest.of(queue, new Job("key-a")).priority(5).rateKey("customer-1"));
				requests.add(TaskRequest.of(queue, new Job("key-b")).priority(5).rateKey("customer-1"));
				for (int i = 0; i < 20; i++) {
					requests.add(TaskRequest.of(queue, new Job("p0-" + i)));
				}
				worker.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
				await().atMost(Duration.ofSeconds(15)).until(() -> log.finishedCount() == 22);

				List<Run> runs = inLeaseOrder(log);
				assertThat(name(runs.get(0))).isEqualTo("key-a");
				Run keyB = runs.stream().filter((run) -> name(run).equals("key-b")).findFirst().orElseThrow();
				long wait = Duration.between(runs.get(0).context().startedAt(), keyB.context().startedAt()).toMillis();
				assertThat(wait).as("ms between the leases of the key's two tasks").isGreaterThanOrEqualTo(1000);
				// Back at its instant among the priority-5 tasks, not behind the
				// priority-0 backlog: 20 tasks of 100 ms, one at a time.
				assertThat(runs.size() - 1 - runs.indexOf(keyB))
					.as("priority-0 tasks leased after it, in %s", names(runs))
					.isGreaterThanOrEqualTo(3);
				assertPrioritiesEmpty(worker, queue);
			});
	}

	@Test
	void statsCountReadyTasksOfEveryPriorityAndRemovingTheDrainedQueueLeavesNoKey() {
		String queue = "priority-stats";
		PartitionKeys keys = keys(queue);
		RunLog log = new RunLog();
		this.producers.run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			StringRedisTemplate template = producer.getBean(StringRedisTemplate.class);
			QueueControl control = producer.getBean(QueueControl.class);
			RedisQueueStats stats = producer.getBean(RedisQueueStats.class);
			List<TaskId> high = new ArrayList<>();
			List<TaskId> low = new ArrayList<>();
			List<TaskId> normal = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				high.add(scheduler.schedule(TaskRequest.of(queue, new Job("p10-" + i)).priority(10)));
			}
			for (int i = 0; i < 3; i++) {
				low.add(scheduler.schedule(TaskRequest.of(queue, new Job("p-3-" + i)).priority(-3)));
			}
			for (int i = 0; i < 4; i++) {
				normal.add(scheduler.schedule(TaskRequest.of(queue, new Job("p0-" + i))));
			}
			TaskId scheduled = scheduler
				.schedule(TaskRequest.of(queue, new Job("p7-later")).priority(7).delay(Duration.ofHours(1)));

			// The layout: one list per priority, the levels in use, the task's field.
			assertThat(template.opsForList().size(keys.ready())).isEqualTo(4);
			assertThat(template.opsForList().range(readyKey(keys, 10), 0, -1)).containsExactlyElementsOf(values(high));
			assertThat(template.opsForList().range(readyKey(keys, -3), 0, -1)).containsExactlyElementsOf(values(low));
			Set<TypedTuple<String>> levels = template.opsForZSet().rangeWithScores(keys.base() + "levels", 0, -1);
			assertThat(levels).extracting(TypedTuple::getValue, TypedTuple::getScore)
				.contains(tuple("-3", -3.0), tuple("10", 10.0))
				.doesNotContain(tuple("0", 0.0));
			assertThat(template.opsForHash().get(keys.meta(), "pr")).isEqualTo("1");
			assertThat(template.opsForHash().get(keys.task(high.get(0).value()), "pr")).isEqualTo("10");
			assertThat(template.opsForHash().get(keys.task(low.get(0).value()), "pr")).isEqualTo("-3");
			assertThat(template.opsForHash().get(keys.task(scheduled.value()), "pr")).isEqualTo("7");
			assertThat(template.opsForHash().hasKey(keys.task(normal.get(0).value()), "pr")).isFalse();

			// Stats and removal count the ready tasks of every priority.
			QueueStats before = stats.read(queue);
			assertThat(before.ready()).as("ready tasks").isEqualTo(9);
			assertThat(before.scheduled()).as("scheduled tasks").isEqualTo(1);
			// The oldest ready task is the first of priority 10, at the head of its list.
			Object firstDue = template.opsForHash().get(keys.task(high.get(0).value()), "d");
			assertThat(before.oldestReadyDueMs()).as("oldest ready due time")
				.isEqualTo(Long.parseLong((String) firstDue));
			QueueRemoval refused = control.remove(queue);
			assertThat(refused.outcome()).isEqualTo(QueueRemoval.Outcome.NOT_EMPTY);
			assertThat(List.of(refused.scheduled(), refused.ready(), refused.active(), refused.dead()))
				.containsExactly(1L, 9L, 0L, 0L);
			assertThat(scheduler.cancel(queue, scheduled)).isTrue();

			worker(queue, log).run((worker) -> {
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() == 9);
				assertThat(names(inLeaseOrder(log))).containsExactly("p10-0", "p10-1", "p0-0", "p0-1", "p0-2", "p0-3",
						"p-3-0", "p-3-1", "p-3-2");
				assertThat(stats.read(queue).ready()).isZero();
			});

			// A cancelled ready task leaves its hint in its priority's list; removal
			// deletes it with every other key of the drained queue.
			TaskId cancelled = scheduler.schedule(TaskRequest.of(queue, new Job("p5-cancelled")).priority(5));
			assertThat(scheduler.cancel(queue, cancelled)).isTrue();
			assertThat(template.opsForList().range(readyKey(keys, 5), 0, -1)).containsExactly(cancelled.value());
			Set<String> leftover = template.keys(keys.base() + "*");
			QueueRemoval removal = control.remove(queue);
			assertThat(removal.removed()).as("%s; keys before: %s", removal.message(), leftover).isTrue();
			// Only the cancelled task's tombstone is left, and it expires.
			String tombstone = keys.task(cancelled.value());
			assertThat(template.keys(keys.base() + "*")).as("keys after removal; before: %s", leftover)
				.isSubsetOf(tombstone);
			assertThat(template.getExpire(tombstone)).as("TTL of the cancelled task's tombstone").isPositive();
		});
	}

	@ParameterizedTest(name = "priority {0}")
	@ValueSource(ints = { 11, -11, Integer.MAX_VALUE, Integer.MIN_VALUE })
	void aPriorityOutOfRangeFailsAtSchedule(int bad) {
		String queue = "priority-bad";
		this.producers.run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			assertThatExceptionOfType(InvalidTaskRequestException.class)
				.isThrownBy(() -> scheduler.schedule(TaskRequest.of(queue, new Job("bad")).priority(bad)))
				.withMessageContaining("priority " + bad + " for queue '" + queue + "' is invalid: use -10 to 10");
			assertThatExceptionOfType(InvalidTaskRequestException.class)
				.isThrownBy(() -> scheduler.scheduleAll(List.of(TaskRequest.of(queue, new Job("good")),
						TaskRequest.of(queue, new Job("bad")).priority(bad))))
				.withMessageContaining("priority " + bad + " for queue '" + queue + "' is invalid: use -10 to 10");
			StringRedisTemplate template = producer.getBean(StringRedisTemplate.class);
			assertThat(template.keys(keys(queue).base() + "t:*")).as("tasks stored").isEmpty();
		});
	}

	private ApplicationContextRunner worker(String queue, RunLog log, String... properties) {
		return this.workers.withBean(RunLog.class, () -> log)
			.withPropertyValues("test.queue=" + queue)
			.withPropertyValues(properties);
	}

	private PartitionKeys keys(String queue) {
		return PartitionKeys.of(this.redis.keyPrefix(), queue);
	}

	private static String readyKey(PartitionKeys keys, int priority) {
		return keys.base() + "ready:" + priority;
	}

	private long heldUntil(AssertableApplicationContext context, String queue) {
		Object held = context.getBean(StringRedisTemplate.class).opsForHash().get(keys(queue).meta(), "fh");
		return (held != null) ? Long.parseLong((String) held) : 0;
	}

	/**
	 * The drained queue is consistent and holds no ready hint of any priority.
	 */
	private void assertPrioritiesEmpty(AssertableApplicationContext context, String queue) {
		StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
		ShortLeases.assertPartitionEmpty(template, this.redis, queue);
		assertThat(template.keys(keys(queue).base() + "ready:*")).as("ready lists of priorities other than 0")
			.isEmpty();
	}

	private static List<Run> inLeaseOrder(RunLog log) {
		return log.runs().stream().sorted(Comparator.comparingLong(PriorityIntegrationTests::fence)).toList();
	}

	private static Run only(RunLog log, TaskId id) {
		List<Run> runs = log.of(id);
		assertThat(runs).as("runs of %s", id).hasSize(1);
		return runs.get(0);
	}

	/** The lease's fence: it grows with each lease of the partition. */
	private static long fence(Run run) {
		String token = run.context().leaseToken();
		return Long.parseLong(token.substring(token.lastIndexOf(':') + 1));
	}

	private static String name(Run run) {
		return ((Job) run.payload()).name();
	}

	private static List<String> names(List<Run> runs) {
		return runs.stream().map(PriorityIntegrationTests::name).toList();
	}

	private static List<String> values(List<TaskId> ids) {
		return ids.stream().map(TaskId::value).collect(Collectors.toList());
	}

	record Job(String name) {
	}

	/**
	 * One handler of {@code test.queue}, of concurrency {@code test.concurrency} (1 by
	 * default), that logs each run, takes {@code test.sleep-ms}, fails the first run of a
	 * task named {@code fail} and says "slow down" for {@link #HOLD} in the first run of
	 * a task named {@code limit}. The first run of the task named {@code test.gated-task}
	 * waits for {@code gate} to open.
	 */
	@Configuration(proxyBeanMethods = false)
	static class PriorityHandler {

		private final RunLog log;

		private final long sleepMillis;

		private final String gatedTask;

		final CountDownLatch gate = new CountDownLatch(1);

		PriorityHandler(RunLog log, Environment environment) {
			this.log = log;
			this.sleepMillis = environment.getProperty("test.sleep-ms", Long.class, 0L);
			this.gatedTask = environment.getProperty("test.gated-task", "");
		}

		@DelayedTaskHandler(queue = "${test.queue}", concurrency = "${test.concurrency:1}")
		void handle(Job job, TaskContext context) throws InterruptedException {
			Run run = this.log.started("a", context, job);
			if (job.name().equals(this.gatedTask) && this.log.of(context.id()).size() == 1) {
				this.gate.await(10, TimeUnit.SECONDS);
			}
			if (this.sleepMillis > 0) {
				Thread.sleep(this.sleepMillis);
			}
			if (job.name().equals("fail") && context.attempt() == 1) {
				throw new IllegalStateException("The first run of " + job.name() + " fails");
			}
			if (job.name().equals("limit") && this.log.of(context.id()).size() == 1) {
				throw new RateLimitedException(HOLD);
			}
			run.finished();
		}

	}

}
