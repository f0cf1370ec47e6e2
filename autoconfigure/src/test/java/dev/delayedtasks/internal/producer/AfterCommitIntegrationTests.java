package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.internal.producer.TransactionalApp.Failure;
import dev.delayedtasks.internal.producer.TransactionalApp.RecordingListener;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Scheduling after the commit of a real database transaction (H2 with Spring's
 * {@code DataSourceTransactionManager}) on a real Redis: the task is stored when the
 * transaction commits and never when it rolls back, with the id known at the call.
 */
@WithRedis
class AfterCommitIntegrationTests {

	private static final String QUEUE = "order-emails";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	AfterCommitIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = TransactionalApp.runner(redis);
	}

	@Test
	void aTaskScheduledAfterCommitIsPendingUntilTheCommitAndStoredByIt() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<ScheduleResult> result = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				app.insertOrder("order-1");
				result.set(app.scheduler().submit(TaskRequest.of(QUEUE, "order-1").afterCommit()));
				assertThat(result.get().pending()).isTrue();
				assertThat(result.get().outcome()).isEqualTo(ScheduleResult.Outcome.PENDING);
				assertThat(result.get().dueAt()).isNull();
				assertThat(app.scheduler().find(QUEUE, result.get().id())).as("not sent before the commit").isEmpty();
			});
			TaskInfo info = app.scheduler().find(QUEUE, result.get().id()).orElseThrow();
			assertThat(info.state()).isEqualTo(TaskState.READY);
			assertThat(app.listener().scheduled).singleElement().satisfies((scheduled) -> {
				assertThat(scheduled.id()).isEqualTo(result.get().id());
				assertThat(scheduled.outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
			});
			assertThat(app.orders()).containsExactly("order-1");
		});
	}

	@Test
	void theAsyncMethodsHoldAnAfterCommitRequestForTheCommitAndCompleteWithPending() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<ScheduleResult> held = new AtomicReference<>();
			AtomicReference<List<ScheduleResult>> mixed = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				CompletableFuture<ScheduleResult> future = app.scheduler()
					.submitAsync(TaskRequest.of(QUEUE, "async-held").afterCommit());
				assertThat(future).as("completed at the call, on the transaction's thread").isCompleted();
				held.set(future.join());
				assertThat(held.get().outcome()).isEqualTo(ScheduleResult.Outcome.PENDING);
				mixed.set(app.scheduler()
					.scheduleAllAsync(List.of(TaskRequest.of(QUEUE, "async-all-held").afterCommit(),
							TaskRequest.of(QUEUE, "async-all-now")))
					.join());
				assertThat(mixed.get()).extracting(ScheduleResult::outcome)
					.containsExactly(ScheduleResult.Outcome.PENDING, ScheduleResult.Outcome.CREATED);
				assertThat(app.scheduler().find(QUEUE, held.get().id())).as("not sent before the commit").isEmpty();
				assertThat(app.scheduler().find(QUEUE, mixed.get().get(0).id())).isEmpty();
				assertThat(app.scheduler().find(QUEUE, mixed.get().get(1).id())).isPresent();
			});
			assertThat(app.scheduler().find(QUEUE, held.get().id())).isPresent();
			assertThat(app.scheduler().find(QUEUE, mixed.get().get(0).id())).isPresent();
		});
	}

	@Test
	void theAsyncMethodsDropAnAfterCommitRequestOnRollbackAndCancelAHeldTask() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<TaskId> rolledBack = new AtomicReference<>();
			AtomicReference<TaskId> cancelled = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				rolledBack
					.set(app.scheduler().scheduleAsync(TaskRequest.of(QUEUE, "async-rollback").afterCommit()).join());
				status.setRollbackOnly();
			});
			app.transaction().executeWithoutResult((status) -> {
				cancelled
					.set(app.scheduler().scheduleAsync(TaskRequest.of(QUEUE, "async-cancel").afterCommit()).join());
				assertThat(app.scheduler().cancelAsync(QUEUE, cancelled.get()).join()).isTrue();
			});
			assertThat(app.scheduler().find(QUEUE, rolledBack.get())).isEmpty();
			assertThat(app.scheduler().find(QUEUE, cancelled.get())).isEmpty();
			assertThat(app.listener().scheduled).isEmpty();
		});
	}

	@Test
	void aTrackedTaskThatWillNeverBeStoredFailsItsFutureAtOnce() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<TrackedTask> rolledBack = new AtomicReference<>();
			AtomicReference<TrackedTask> cancelled = new AtomicReference<>();
			AtomicReference<TrackedTask> committed = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				rolledBack.set(app.scheduler().track(TaskRequest.of(QUEUE, "tracked-rollback").afterCommit()));
				status.setRollbackOnly();
			});
			app.transaction().executeWithoutResult((status) -> {
				cancelled.set(app.scheduler().track(TaskRequest.of(QUEUE, "tracked-cancel").afterCommit()));
				committed.set(app.scheduler().track(TaskRequest.of(QUEUE, "tracked-commit").afterCommit()));
				assertThat(cancelled.get().scheduled().pending()).isTrue();
				assertThat(app.scheduler().cancel(QUEUE, cancelled.get().id())).isTrue();
			});
			assertThat(rolledBack.get().outcome()).isCompletedExceptionally();
			assertThat(catchThrowable(() -> rolledBack.get().await(Duration.ofSeconds(1))))
				.hasMessageContaining("transaction rolled back");
			assertThat(catchThrowable(() -> cancelled.get().await(Duration.ofSeconds(1))))
				.hasMessageContaining("cancelled before its transaction committed");
			// Stored at the commit: no handler runs it here, so it is still awaited.
			assertThat(app.scheduler().find(QUEUE, committed.get().id())).isPresent();
			assertThat(committed.get().outcome()).isNotDone();
			app.scheduler().cancel(QUEUE, committed.get().id());
			assertThat(committed.get().await(Duration.ofSeconds(5)))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(TaskOutcome.Kind.CANCELLED));
		});
	}

	@Test
	void aTaskScheduledAfterCommitIsNeverSentWhenTheTransactionRollsBack() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<TaskId> id = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				app.insertOrder("order-2");
				id.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "order-2").afterCommit()));
				status.setRollbackOnly();
			});
			assertThat(app.orders()).isEmpty();
			assertThat(app.scheduler().find(QUEUE, id.get())).isEmpty();
			assertThat(app.listener().scheduled).isEmpty();
			assertThat(app.listener().failed).isEmpty();
		});
	}

	@Test
	void aTaskScheduledAfterCommitIsDroppedWhenAnExceptionRollsTheTransactionBack() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<TaskId> id = new AtomicReference<>();
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> app.transaction().executeWithoutResult((status) -> {
					id.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "order-3").afterCommit()));
					throw new IllegalStateException("payment declined");
				}));
			assertThat(app.scheduler().find(QUEUE, id.get())).isEmpty();
		});
	}

	@Test
	void outsideATransactionAfterCommitSendsAtOnce() {
		this.runner.run((context) -> {
			App app = new App(context);
			ScheduleResult result = app.scheduler().submit(TaskRequest.of(QUEUE, "no-transaction").afterCommit());
			assertThat(result.outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
			assertThat(result.dueAt()).isNotNull();
			assertThat(app.scheduler().find(QUEUE, result.id())).isPresent();
		});
	}

	@Test
	void withoutAfterCommitATaskIsSentAtOnceEvenInsideATransaction() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<TaskId> id = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				ScheduleResult result = app.scheduler().submit(TaskRequest.of(QUEUE, "at-once"));
				assertThat(result.outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
				id.set(result.id());
				status.setRollbackOnly();
			});
			assertThat(app.scheduler().find(QUEUE, id.get())).as("sent before the rollback").isPresent();
		});
	}

	@Test
	void thePropertyMakesAfterCommitTheDefaultAndARequestCanOptOut() {
		TransactionalApp.runner(this.redis, "delayed-tasks.producer.after-commit=true").run((context) -> {
			App app = new App(context);
			AtomicReference<TaskId> deferred = new AtomicReference<>();
			AtomicReference<TaskId> atOnce = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				deferred.set(app.scheduler().schedule(QUEUE, "by-default", Duration.ofMinutes(5)));
				ScheduleResult result = app.scheduler().submit(TaskRequest.of(QUEUE, "opted-out").afterCommit(false));
				assertThat(result.outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
				atOnce.set(result.id());
				status.setRollbackOnly();
			});
			assertThat(app.scheduler().find(QUEUE, deferred.get())).isEmpty();
			assertThat(app.scheduler().find(QUEUE, atOnce.get())).isPresent();
			// Outside a transaction the default sends at once.
			assertThat(app.scheduler().submit(TaskRequest.of(QUEUE, "outside")).outcome())
				.isEqualTo(ScheduleResult.Outcome.CREATED);
		});
	}

	@Test
	void badInputThrowsAtTheCallInsideTheTransaction() {
		this.runner.run((context) -> {
			App app = new App(context);
			app.transaction().executeWithoutResult((status) -> {
				assertThatExceptionOfType(InvalidTaskRequestException.class)
					.isThrownBy(() -> app.scheduler()
						.schedule(TaskRequest.of(QUEUE, "late").delay(Duration.ofSeconds(-1)).afterCommit()))
					.withMessageContaining("negative");
				assertThatExceptionOfType(InvalidTaskRequestException.class)
					.isThrownBy(() -> app.scheduler().schedule(TaskRequest.of(QUEUE, "x".repeat(70_000)).afterCommit()))
					.withMessageContaining("over the limit");
				assertThatExceptionOfType(InvalidTaskRequestException.class)
					.isThrownBy(() -> app.scheduler().schedule(TaskRequest.of("bad queue", "x").afterCommit()));
			});
			assertThat(app.listener().scheduled).isEmpty();
		});
	}

	@Test
	void aRequiresNewTransactionSendsAtItsOwnCommitWhateverTheOuterOneDoes() {
		this.runner.run((context) -> {
			App app = new App(context);
			TransactionTemplate requiresNew = new TransactionTemplate(app.transaction().getTransactionManager());
			requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
			AtomicReference<TaskId> outer = new AtomicReference<>();
			AtomicReference<TaskId> inner = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				outer.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "outer").afterCommit()));
				requiresNew.executeWithoutResult((innerStatus) -> {
					app.insertOrder("audit-1");
					inner.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "inner").afterCommit()));
				});
				assertThat(app.scheduler().find(QUEUE, inner.get())).as("sent at the inner commit").isPresent();
				assertThat(app.scheduler().find(QUEUE, outer.get())).isEmpty();
				status.setRollbackOnly();
			});
			assertThat(app.orders()).containsExactly("audit-1");
			assertThat(app.scheduler().find(QUEUE, inner.get())).isPresent();
			assertThat(app.scheduler().find(QUEUE, outer.get())).isEmpty();
		});
	}

	@Test
	void aNestedTransactionRolledBackToItsSavepointDropsTheTasksItScheduled() {
		this.runner.run((context) -> {
			App app = new App(context);
			TransactionTemplate nested = new TransactionTemplate(app.transaction().getTransactionManager());
			nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
			AtomicReference<TaskId> before = new AtomicReference<>();
			AtomicReference<TaskId> rolledBack = new AtomicReference<>();
			AtomicReference<TaskId> kept = new AtomicReference<>();
			AtomicReference<TaskId> after = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				before.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "before").afterCommit()));
				nested.executeWithoutResult((nestedStatus) -> {
					rolledBack.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "rolled-back").afterCommit()));
					nestedStatus.setRollbackOnly();
				});
				nested.executeWithoutResult((nestedStatus) -> kept
					.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "kept").afterCommit())));
				after.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "after").afterCommit()));
			});
			assertThat(app.scheduler().find(QUEUE, before.get())).isPresent();
			assertThat(app.scheduler().find(QUEUE, rolledBack.get())).isEmpty();
			assertThat(app.scheduler().find(QUEUE, kept.get())).isPresent();
			assertThat(app.scheduler().find(QUEUE, after.get())).isPresent();
		});
	}

	@Test
	void aNestedTransactionThatSchedulesFirstAndRollsBackLeavesTheOuterTasksAlone() {
		this.runner.run((context) -> {
			App app = new App(context);
			TransactionTemplate nested = new TransactionTemplate(app.transaction().getTransactionManager());
			nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
			AtomicReference<TaskId> rolledBack = new AtomicReference<>();
			AtomicReference<TaskId> after = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				// The savepoint is made before the scheduler has anything to hold.
				nested.executeWithoutResult((nestedStatus) -> {
					rolledBack.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "first").afterCommit()));
					nestedStatus.setRollbackOnly();
				});
				after.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "after").afterCommit()));
			});
			assertThat(app.scheduler().find(QUEUE, rolledBack.get())).isEmpty();
			assertThat(app.scheduler().find(QUEUE, after.get())).isPresent();
		});
	}

	@Test
	void cancelAndRescheduleActOnATaskTheTransactionHolds() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<TaskId> cancelled = new AtomicReference<>();
			AtomicReference<TaskId> moved = new AtomicReference<>();
			Instant at = Instant.parse("2031-05-01T10:00:00Z");
			app.transaction().executeWithoutResult((status) -> {
				cancelled.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "cancel-me").afterCommit()));
				moved.set(app.scheduler()
					.schedule(TaskRequest.of(QUEUE, "move-me").delay(Duration.ofMinutes(1)).afterCommit()));
				assertThat(app.scheduler().cancel(QUEUE, cancelled.get())).isTrue();
				assertThat(app.scheduler().reschedule(QUEUE, moved.get(), at)).isTrue();
				assertThat(app.scheduler().cancel(QUEUE, TaskId.of("never-scheduled"))).isFalse();
			});
			assertThat(app.scheduler().find(QUEUE, cancelled.get())).isEmpty();
			assertThat(app.scheduler().find(QUEUE, moved.get())).hasValueSatisfying((info) -> {
				assertThat(info.state()).isEqualTo(TaskState.SCHEDULED);
				assertThat(info.dueAt()).isEqualTo(at);
			});
		});
	}

	@Test
	void scheduleAllHoldsTheRequestsThatWaitAndSendsTheOthers() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<List<ScheduleResult>> results = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				results.set(app.scheduler()
					.scheduleAll(List.of(TaskRequest.of(QUEUE, "a").afterCommit(), TaskRequest.of(QUEUE, "b"),
							TaskRequest.of("other-queue", "c").afterCommit(),
							TaskRequest.of(QUEUE, "d").afterCommit())));
				assertThat(results.get()).extracting(ScheduleResult::outcome)
					.containsExactly(ScheduleResult.Outcome.PENDING, ScheduleResult.Outcome.CREATED,
							ScheduleResult.Outcome.PENDING, ScheduleResult.Outcome.PENDING);
				assertThat(app.scheduler().find(QUEUE, results.get().get(0).id())).isEmpty();
			});
			for (ScheduleResult result : results.get()) {
				String queue = result.equals(results.get().get(2)) ? "other-queue" : QUEUE;
				assertThat(app.scheduler().find(queue, result.id())).as(result.toString()).isPresent();
			}
			// One script call per queue at the commit, besides the one at the call.
			assertThat(app.listener().scheduled).hasSize(4);
		});
	}

	@Test
	void aTrackedRequestAnsweredWithAnotherTaskAtTheCommitTracksThatTask() {
		this.runner.run((context) -> {
			App app = new App(context);
			TaskId holder = app.scheduler()
				.schedule(TaskRequest.of(QUEUE, "holder")
					.uniqueKey("order-12")
					.uniqueFor(Duration.ofHours(1))
					.delay(Duration.ofHours(1)));
			AtomicReference<TrackedTask> duplicate = new AtomicReference<>();
			app.transaction()
				.executeWithoutResult((status) -> duplicate.set(app.scheduler()
					.track(TaskRequest.of(QUEUE, "duplicate")
						.uniqueKey("order-12")
						.uniqueFor(Duration.ofHours(1))
						.afterCommit())));
			assertThat(duplicate.get().outcome()).isNotDone();

			assertThat(app.scheduler().cancel(QUEUE, holder)).isTrue();

			assertThat(duplicate.get().await(Duration.ofSeconds(5))).hasValueSatisfying((outcome) -> {
				assertThat(outcome.kind()).isEqualTo(TaskOutcome.Kind.CANCELLED);
				assertThat(outcome.id()).isEqualTo(holder);
			});
		});
	}

	@Test
	void anotherCallersFailedWaitForATaskHeldForTheCommitLeavesTheTrackedTaskAlone() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<TrackedTask> tracked = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				tracked.set(app.scheduler()
					.track(TaskRequest.of(QUEUE, "held").id("held-9").delay(Duration.ofHours(1)).afterCommit()));
				// Not stored yet: another thread's wait for it ends at once, empty.
				assertThat(CompletableFuture
					.supplyAsync(() -> app.scheduler().awaitOutcome(QUEUE, TaskId.of("held-9"), Duration.ofMillis(200)))
					.join()).isEmpty();
			});
			assertThat(tracked.get().outcome()).isNotDone();

			assertThat(app.scheduler().cancel(QUEUE, TaskId.of("held-9"))).isTrue();

			assertThat(tracked.get().await(Duration.ofSeconds(5)))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(TaskOutcome.Kind.CANCELLED));
		});
	}

	@Test
	void oneCorruptTaskAmongThoseACommitSendsFailsAloneAndTheOthersAreStoredAndTracked() {
		this.runner.run((context) -> {
			App app = new App(context);
			// Bad data in Redis under one id: the enqueue script parks it as corrupt.
			context.getBean(StringRedisTemplate.class)
				.opsForValue()
				.set(PartitionKeys.of(this.redis.keyPrefix(), QUEUE).task("bad-1"), "not a hash");
			AtomicReference<TrackedTask> good = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				good.set(app.scheduler()
					.track(TaskRequest.of(QUEUE, "good").id("good-1").delay(Duration.ofHours(1)).afterCommit()));
				app.scheduler().submit(TaskRequest.of(QUEUE, "bad").id("bad-1").afterCommit());
			});

			assertThat(app.scheduler().find(QUEUE, TaskId.of("good-1"))).isPresent();
			assertThat(good.get().outcome()).isNotDone();
			assertThat(app.listener().scheduled).extracting(ScheduleResult::id).containsExactly(TaskId.of("good-1"));
			assertThat(app.listener().failed).extracting(Failure::id).containsExactly(TaskId.of("bad-1"));
			assertThat(app.scheduler().cancel(QUEUE, TaskId.of("good-1"))).isTrue();
			assertThat(good.get().await(Duration.ofSeconds(5)))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(TaskOutcome.Kind.CANCELLED));
		});
	}

	@Test
	void aCallerSuppliedIdThatExistsIsReportedAsExistingWhenSent() {
		this.runner.run((context) -> {
			App app = new App(context);
			app.scheduler().schedule(TaskRequest.of(QUEUE, "first").id("order-9-reminder"));
			app.transaction().executeWithoutResult((status) -> {
				ScheduleResult result = app.scheduler()
					.submit(TaskRequest.of(QUEUE, "second").id("order-9-reminder").afterCommit());
				assertThat(result.id()).isEqualTo(TaskId.of("order-9-reminder"));
				assertThat(result.pending()).isTrue();
			});
			assertThat(app.listener().scheduled).extracting(ScheduleResult::outcome)
				.containsExactly(ScheduleResult.Outcome.CREATED, ScheduleResult.Outcome.EXISTING);
		});
	}

	@Test
	void aTaskScheduledFromAnotherSynchronizationsAfterCommitIsSent() {
		this.runner.run((context) -> {
			App app = new App(context);
			AtomicReference<TaskId> id = new AtomicReference<>();
			app.transaction().executeWithoutResult((status) -> {
				app.scheduler().schedule(TaskRequest.of(QUEUE, "first").afterCommit());
				TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

					@Override
					public void afterCommit() {
						id.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "from-after-commit").afterCommit()));
					}

				});
			});
			assertThat(app.scheduler().find(QUEUE, id.get())).isPresent();
		});
	}

	@Test
	void aTransactionWhoseOutcomeIsUnknownSendsNothingAndReportsItsTasks() {
		this.runner.run((context) -> {
			App app = new App(context);
			TransactionTemplate lostReply = new TransactionTemplate(
					new CommitReplyLostTransactionManager(context.getBean(DataSource.class)));
			AtomicReference<TaskId> id = new AtomicReference<>();
			assertThatExceptionOfType(TransactionSystemException.class)
				.isThrownBy(() -> lostReply.executeWithoutResult((status) -> {
					app.insertOrder("order-8");
					id.set(app.scheduler().schedule(TaskRequest.of(QUEUE, "order-8").afterCommit()));
				}));
			assertThat(app.orders()).as("committed, though the manager cannot know").containsExactly("order-8");
			assertThat(app.scheduler().find(QUEUE, id.get())).isEmpty();
			assertThat(app.listener().failed).singleElement().satisfies((failure) -> {
				assertThat(failure.id()).isEqualTo(id.get());
				assertThat(failure.failure()).hasMessageContaining("outcome is unknown");
			});
		});
	}

	/**
	 * A real commit whose reply is lost: Spring then completes the synchronizations with
	 * status unknown.
	 */
	static final class CommitReplyLostTransactionManager extends DataSourceTransactionManager {

		CommitReplyLostTransactionManager(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
			super.doCommit(status);
			throw new TransactionSystemException("Connection lost while reading the reply to COMMIT");
		}

	}

	private record App(DelayedTaskScheduler scheduler, TransactionTemplate transaction, JdbcTemplate jdbc,
			RecordingListener listener) {

		App(AssertableApplicationContext context) {
			this(context.getBean(DelayedTaskScheduler.class), context.getBean(TransactionTemplate.class),
					context.getBean(JdbcTemplate.class), context.getBean(RecordingListener.class));
		}

		void insertOrder(String id) {
			this.jdbc.update("INSERT INTO orders (id) VALUES (?)", id);
		}

		List<String> orders() {
			return this.jdbc.queryForList("SELECT id FROM orders ORDER BY id", String.class);
		}

	}

}
