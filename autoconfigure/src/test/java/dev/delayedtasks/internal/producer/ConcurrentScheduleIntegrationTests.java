package dev.delayedtasks.internal.producer;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.ScheduleResult.Outcome;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.BadInputIntegrationTests;
import dev.delayedtasks.internal.store.PartitionProbe;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Threads calling the blocking {@code schedule} on one queue at the same time share
 * script calls, and each still gets its own result, or its own exception naming its own
 * task.
 */
@WithRedis(privateServer = true)
class ConcurrentScheduleIntegrationTests {

	private static final int THREADS = 16;

	private static final int PER_THREAD = 300;

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void concurrentCallersShareScriptCallsAndEachGetsItsOwnResult() throws Exception {
		String queue = "concurrent";
		// One task that exists already: its caller must get EXISTING, the others CREATED.
		this.fixture.scheduler.schedule(TaskRequest.of(queue, "first").id("existing").delay(Duration.ofMinutes(5)));
		long callsBefore = evalShaCalls();
		Set<TaskId> ids = ConcurrentHashMap.newKeySet();
		List<ScheduleResult> existing = new ArrayList<>();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				int thread = t;
				futures.add(executor.submit(() -> {
					start.await();
					for (int i = 0; i < PER_THREAD; i++) {
						TaskRequest request = TaskRequest.of(queue, thread * PER_THREAD + i)
							.delay(Duration.ofMinutes(5));
						if (thread == 0 && i == PER_THREAD / 2) {
							request = request.id("existing");
						}
						ScheduleResult result = this.fixture.scheduler.submit(request);
						if (result.outcome() == Outcome.EXISTING) {
							synchronized (existing) {
								existing.add(result);
							}
						}
						else {
							assertThat(result.outcome()).isEqualTo(Outcome.CREATED);
							ids.add(result.id());
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(existing).singleElement().extracting(ScheduleResult::id).isEqualTo(TaskId.of("existing"));
		assertThat(ids).hasSize(THREADS * PER_THREAD - 1);
		PartitionProbe probe = new PartitionProbe(this.fixture, queue);
		assertThat(probe.sched()).hasSize(THREADS * PER_THREAD);
		assertThat(probe.stat("enq")).isEqualTo(THREADS * PER_THREAD);
		// Threads that arrived while a call was under way went out together.
		assertThat(evalShaCalls() - callsBefore).isLessThan(THREADS * PER_THREAD);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void concurrentCallersOfAnUnreachableRedisEachGetAnExceptionNamingTheirOwnTask() throws Exception {
		try (BadInputIntegrationTests.Unreachable unreachable = new BadInputIntegrationTests.Unreachable()) {
			ExecutorService executor = Executors.newFixedThreadPool(4);
			try {
				List<Future<TaskStoreException>> futures = new ArrayList<>();
				for (int t = 0; t < 4; t++) {
					String id = "caller-" + t;
					futures.add(executor.submit(() -> {
						try {
							unreachable.scheduler.schedule(TaskRequest.of("q", "x").id(id));
							return null;
						}
						catch (TaskStoreException ex) {
							return ex;
						}
					}));
				}
				for (int t = 0; t < 4; t++) {
					TaskStoreException ex = futures.get(t).get(60, TimeUnit.SECONDS);
					assertThat(ex).isNotNull();
					assertThat(ex.getTaskId()).isEqualTo(TaskId.of("caller-" + t));
					assertThat(ex).hasMessageContaining("caller-" + t).hasMessageContaining("'q'");
				}
			}
			finally {
				executor.shutdownNow();
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private long evalShaCalls() {
		String stats = this.fixture.redis.execute((RedisCallback<String>) (
				connection) -> connection.serverCommands().info("commandstats").getProperty("cmdstat_evalsha"));
		if (stats == null) {
			return 0;
		}
		String calls = stats.substring(stats.indexOf("calls=") + 6);
		return Long.parseLong(calls.substring(0, calls.indexOf(',')));
	}

}
