package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.ReactiveDelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.ScheduleResult.Outcome;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.PartitionProbe;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.internal.store.script.ReactiveStoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The non-blocking API on a real Redis: the same results as the blocking one, tasks of
 * concurrent calls shared into few script calls, invalid input refused in the future
 * before anything is sent, and the reactive scheduler on top.
 */
@WithRedis(privateServer = true)
class AsyncSchedulingIntegrationTests {

	private StoreFixture fixture;

	private RedisDelayedTaskScheduler scheduler;

	private final List<String> heard = new CopyOnWriteArrayList<>();

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
		DelayedTaskListener listener = new DelayedTaskListener() {

			@Override
			public void scheduled(String queue, ScheduleResult result) {
				AsyncSchedulingIntegrationTests.this.heard.add("scheduled " + queue + " " + result.id());
			}

			@Override
			public void cancelled(String queue, TaskId id) {
				AsyncSchedulingIntegrationTests.this.heard.add("cancelled " + queue + " " + id);
			}

		};
		this.scheduler = new RedisDelayedTaskScheduler(this.fixture.scripts, this.fixture.settings, this.fixture.codec,
				this.fixture.queues, (queue) -> 4, 500, RedisDelayedTaskScheduler.DEFAULT_BATCH_BYTES, listener,
				ObservationRegistry.NOOP, null,
				new ReactiveStoreScripts(this.fixture.connectionFactory, this.fixture.scripts));
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void aQueueRemovedFromTheIndexAfterThisProcessRegisteredItIsAddedAgainByTheNextAsyncSchedule() throws Exception {
		String queue = "async-removed";
		// Another process: its own index, which remembers having registered the queue.
		RedisDelayedTaskScheduler other = new RedisDelayedTaskScheduler(this.fixture.scripts, this.fixture.settings,
				this.fixture.codec, new QueueIndex(this.fixture.redis, this.fixture.settings.keyPrefix()), (name) -> 4,
				500, RedisDelayedTaskScheduler.DEFAULT_BATCH_BYTES, new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null,
				new ReactiveStoreScripts(this.fixture.connectionFactory, this.fixture.scripts));
		other.scheduleAsync(queue, "first", Duration.ZERO).get(10, TimeUnit.SECONDS);
		ClaimBatch batch = this.fixture.store.claim(queue, 1, "n1");
		this.fixture.store.ack(queue, List.of(batch.tasks().get(0).lease()));
		assertThat(this.fixture.control.remove(queue).removed()).isTrue();
		assertThat(this.fixture.queues.contains(queue)).isFalse();

		other.scheduleAsync(queue, "second", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);

		assertThat(this.fixture.queues.contains(queue)).as("added again after the write").isTrue();
		// The same for scheduleAllAsync.
		this.fixture.redis.opsForSet().remove(this.fixture.queues.key(), queue);
		this.fixture.redis.delete(this.fixture.keys(queue).meta());
		other.scheduleAllAsync(List.of(TaskRequest.of(queue, "third").delay(Duration.ofMinutes(5))))
			.get(10, TimeUnit.SECONDS);
		assertThat(this.fixture.queues.contains(queue)).isTrue();
	}

	@Test
	void theAsyncMethodsRefuseAQueueThatIsNotDeclaredWhenOnlyDeclaredQueuesAreAllowed() {
		RedisDelayedTaskScheduler declaredOnly = new RedisDelayedTaskScheduler(this.fixture.scripts,
				this.fixture.settings, this.fixture.codec, this.fixture.queues, (name) -> 4, 500,
				RedisDelayedTaskScheduler.DEFAULT_BATCH_BYTES, new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null,
				QueueDeclarations.of(List.of("async-declared"), true, (name) -> Optional.empty(), List::of), false,
				new ReactiveStoreScripts(this.fixture.connectionFactory, this.fixture.scripts), OutageBuffer.DISABLED,
				(name) -> Duration.ZERO, null);

		assertThat(declaredOnly.scheduleAsync("async-undeclared", "x", Duration.ZERO)).failsWithin(Duration.ZERO)
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(InvalidTaskRequestException.class)
			.withMessageContaining("async-undeclared");
		assertThat(declaredOnly
			.scheduleAllAsync(List.of(TaskRequest.of("async-declared", "ok"), TaskRequest.of("async-undeclared", "x"))))
			.failsWithin(Duration.ZERO)
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(InvalidTaskRequestException.class);
		assertThat(this.fixture.queues.contains("async-declared")).as("nothing sent").isFalse();
		assertThat(declaredOnly.scheduleAsync("async-declared", "ok", Duration.ZERO).join()).isNotNull();
	}

	@Test
	void submitAsyncStoresTheTaskAndSaysWhetherItWasCreated() throws Exception {
		TaskRequest request = TaskRequest.of("async-one", Map.of("n", 1)).id("a-1").delay(Duration.ofMinutes(5));
		ScheduleResult first = get(this.scheduler.submitAsync(request));
		ScheduleResult again = get(this.scheduler.submitAsync(request));
		assertThat(first.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(again.outcome()).isEqualTo(Outcome.EXISTING);
		assertThat(again.id()).isEqualTo(TaskId.of("a-1"));
		PartitionProbe probe = new PartitionProbe(this.fixture, "async-one");
		assertThat(probe.sched()).containsOnlyKeys("a-1");
		assertThat(probe.sched().get("a-1")).isEqualTo(first.dueAt().toEpochMilli());
		assertThat(probe.payload("a-1")).isEqualTo("{\"h\":{},\"b\":{\"n\":1}}");
		assertThat(this.fixture.redis.opsForSet().members(this.fixture.settings.keyPrefix() + ":queues"))
			.contains("async-one");
		assertThat(this.heard).containsExactly("scheduled async-one a-1", "scheduled async-one a-1");
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void manyTasksInFlightAreAllStoredWithTheirOwnResults() throws Exception {
		int n = 3000;
		long callsBefore = enqueueCalls();
		List<CompletableFuture<TaskId>> futures = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			futures.add(this.scheduler.scheduleAsync("async-many", i, Duration.ofMinutes(5)));
		}
		Set<TaskId> ids = new HashSet<>();
		for (CompletableFuture<TaskId> future : futures) {
			ids.add(get(future));
		}
		assertThat(ids).hasSize(n);
		PartitionProbe probe = new PartitionProbe(this.fixture, "async-many");
		assertThat(probe.sched()).hasSize(n);
		assertThat(probe.stat("enq")).isEqualTo(n);
		// Tasks submitted while a call is in flight share the next call.
		assertThat(enqueueCalls() - callsBefore).isLessThan(n / 2);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void scheduleAllAsyncReturnsResultsInRequestOrder() throws Exception {
		this.scheduler.schedule(TaskRequest.of("async-all-b", 0).id("b-existing").delay(Duration.ofMinutes(5)));
		List<TaskRequest> requests = List.of(TaskRequest.of("async-all-a", 1).id("a1"),
				TaskRequest.of("async-all-b", 2).id("b1").delay(Duration.ofMinutes(5)),
				TaskRequest.of("async-all-b", 3).id("b-existing"), TaskRequest.of("async-all-a", 4).id("a2"));
		List<ScheduleResult> results = get(this.scheduler.scheduleAllAsync(requests));
		assertThat(results).extracting((result) -> result.id().value()).containsExactly("a1", "b1", "b-existing", "a2");
		assertThat(results).extracting(ScheduleResult::outcome)
			.containsExactly(Outcome.CREATED, Outcome.CREATED, Outcome.EXISTING, Outcome.CREATED);
		assertThat(new PartitionProbe(this.fixture, "async-all-a").ready()).containsExactly("a1", "a2");
		assertThat(get(this.scheduler.scheduleAllAsync(List.of()))).isEmpty();
	}

	@Test
	void findCancelAndRescheduleAsyncAct() throws Exception {
		TaskId id = get(
				this.scheduler.scheduleAsync(TaskRequest.of("async-ops", "x").id("op-1").delay(Duration.ofMinutes(5))));
		Optional<TaskInfo> info = get(this.scheduler.findAsync("async-ops", id));
		assertThat(info).get().extracting(TaskInfo::state).isEqualTo(TaskState.SCHEDULED);
		assertThat(get(this.scheduler.rescheduleAsync("async-ops", id, Duration.ofHours(2)))).isTrue();
		Instant runAt = Instant.now().plus(Duration.ofDays(1));
		assertThat(get(this.scheduler.rescheduleAsync("async-ops", id, runAt))).isTrue();
		assertThat(get(this.scheduler.findAsync("async-ops", id))).get()
			.extracting(TaskInfo::dueAt)
			.isEqualTo(Instant.ofEpochMilli(runAt.toEpochMilli()));
		assertThat(get(this.scheduler.cancelAsync("async-ops", id))).isTrue();
		assertThat(get(this.scheduler.cancelAsync("async-ops", id))).isFalse();
		assertThat(get(this.scheduler.rescheduleAsync("async-ops", id, Duration.ZERO))).isFalse();
		assertThat(get(this.scheduler.findAsync("async-ops", id))).isEmpty();
		assertThat(get(this.scheduler.findAsync("async-ops", TaskId.of("never")))).isEmpty();
		assertThat(this.heard).contains("cancelled async-ops op-1");
	}

	@Test
	void invalidInputFailsTheFutureBeforeAnythingIsSent() {
		long callsBefore = enqueueCalls();
		assertFailsInvalid(this.scheduler.scheduleAsync("bad queue", "x", Duration.ZERO), "Queue name 'bad queue'");
		assertFailsInvalid(this.scheduler.scheduleAsync("async-bad", "x", Duration.ofSeconds(-1)), "is negative");
		assertFailsInvalid(this.scheduler.scheduleAsync("async-bad", null, Duration.ZERO), "Payload of a task");
		assertFailsInvalid(this.scheduler.submitAsync(TaskRequest.of("async-bad", "x").maxAttempts(0)),
				"maxAttempts 0");
		assertFailsInvalid(this.scheduler.submitAsync(TaskRequest.of("async-bad", "x".repeat(70_000))),
				"over the limit of 65536 bytes");
		assertFailsInvalid(
				this.scheduler.scheduleAllAsync(
						List.of(TaskRequest.of("async-bad", "ok"), TaskRequest.of("async-bad", "x").uniqueKey("k"))),
				"needs uniqueFor");
		assertFailsInvalid(this.scheduler.cancelAsync("bad queue", TaskId.of("t")), "Queue name 'bad queue'");
		assertFailsInvalid(this.scheduler.rescheduleAsync("async-bad", TaskId.of("t"), Duration.ofSeconds(-1)),
				"is negative");
		assertFailsInvalid(this.scheduler.findAsync("bad queue", TaskId.of("t")), "Queue name 'bad queue'");
		assertThat(enqueueCalls()).isEqualTo(callsBefore);
		assertThat(this.fixture.redis.keys(this.fixture.keys("async-bad").base() + "*")).isEmpty();
	}

	@Test
	void theReactiveSchedulerSendsNothingBeforeSubscriptionAndSignalsResults() {
		ReactiveDelayedTaskScheduler reactive = ReactiveDelayedTaskScheduler.of(this.scheduler);
		var mono = reactive.schedule("async-reactive", "x", Duration.ofMinutes(5));
		PartitionProbe probe = new PartitionProbe(this.fixture, "async-reactive");
		assertThat(probe.sched()).isEmpty();
		TaskId id = mono.block(Duration.ofSeconds(10));
		assertThat(probe.sched()).containsOnlyKeys(id.value());
		assertThat(reactive.find("async-reactive", id).block(Duration.ofSeconds(10))).extracting(TaskInfo::state)
			.isEqualTo(TaskState.SCHEDULED);
		assertThat(
				reactive.scheduleAll(List.of(TaskRequest.of("async-reactive", 1), TaskRequest.of("async-reactive", 2)))
					.collectList()
					.block(Duration.ofSeconds(10)))
			.hasSize(2);
		assertThat(reactive.reschedule("async-reactive", id, Duration.ofMinutes(1)).block(Duration.ofSeconds(10)))
			.isTrue();
		assertThat(reactive.cancel("async-reactive", id).block(Duration.ofSeconds(10))).isTrue();
		assertThat(reactive.find("async-reactive", id).blockOptional(Duration.ofSeconds(10))).isEmpty();
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> reactive.enqueue("bad queue", "x").block(Duration.ofSeconds(10)))
			.withMessageContaining("Queue name 'bad queue'");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> reactive.schedule("async-reactive", null, Duration.ZERO).block(Duration.ofSeconds(10)));
	}

	private long enqueueCalls() {
		String stats = this.fixture.redis.execute((RedisCallback<String>) (
				connection) -> connection.serverCommands().info("commandstats").getProperty("cmdstat_evalsha"));
		if (stats == null) {
			return 0;
		}
		String calls = stats.substring(stats.indexOf("calls=") + 6);
		return Long.parseLong(calls.substring(0, calls.indexOf(',')));
	}

	private static void assertFailsInvalid(CompletableFuture<?> future, String message) {
		assertThat(future).isCompletedExceptionally();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> future.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(InvalidTaskRequestException.class)
			.withMessageContaining(message);
	}

	private static <T> T get(CompletableFuture<T> future) throws Exception {
		return future.get(10, TimeUnit.SECONDS);
	}

}
