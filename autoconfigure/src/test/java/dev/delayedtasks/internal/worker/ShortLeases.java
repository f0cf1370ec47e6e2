package dev.delayedtasks.internal.worker;

import java.time.Duration;

import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.StoreInvariantChecks;
import dev.delayedtasks.test.TestRedis;
import org.awaitility.core.ThrowingRunnable;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The short leases the fault tests run with (DESIGN §1a: lease 2 s, grace 500 ms, timer
 * TTL 1 s), the same in the test JVM and in child worker JVMs, and the check that a
 * queue's partition ended empty and consistent.
 */
final class ShortLeases {

	static final Duration LEASE = Duration.ofSeconds(2);

	static final Duration GRACE = Duration.ofMillis(500);

	static final Duration TIMER_TTL = Duration.ofSeconds(1);

	/**
	 * How long a lost acknowledgement takes to show as a second run: the lease (extended
	 * until the run ended) runs out, the reap grace passes, the timer owner reaps the
	 * task and a dispatcher claims and runs it again; plus a second for a loaded machine.
	 */
	static final Duration REDELIVERY = LEASE.plus(GRACE).plusSeconds(1);

	static final String[] PROPERTIES = { "delayed-tasks.worker.lease-duration=" + LEASE.toMillis() + "ms",
			"delayed-tasks.worker.reap-grace=" + GRACE.toMillis() + "ms",
			"delayed-tasks.worker.timer-ttl=" + TIMER_TTL.toMillis() + "ms" };

	private ShortLeases() {
	}

	/**
	 * A runner of the starter on {@code redis} under its key prefix, with short leases.
	 * @param redis the test's Redis
	 * @param properties further properties, which win over these
	 * @return the runner
	 */
	static ApplicationContextRunner runner(TestRedis redis, String... properties) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.shutdown-timeout=1s")
			.withPropertyValues(PROPERTIES)
			.withPropertyValues(properties);
	}

	/**
	 * Assert that {@code assertion} holds for {@link #REDELIVERY} in a row: long enough
	 * that a task whose outcome was lost, or that was retried or redelivered by mistake,
	 * would have run again.
	 * @param assertion what a further run would break
	 */
	static void assertNoFurtherRun(ThrowingRunnable assertion) {
		await().during(REDELIVERY).atMost(REDELIVERY.plusSeconds(5)).untilAsserted(assertion);
	}

	/**
	 * Nothing left of {@code queue}: no lease, schedule, ready hint, dead letter or task
	 * key, and no broken invariant.
	 */
	static void assertPartitionEmpty(StringRedisTemplate template, TestRedis redis, String queue) {
		PartitionKeys keys = PartitionKeys.of(redis.keyPrefix(), queue);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(template.opsForZSet().zCard(keys.lease())).isZero());
		assertThat(template.opsForZSet().zCard(keys.sched())).isZero();
		assertThat(template.opsForList().size(keys.ready())).isZero();
		assertThat(template.opsForZSet().zCard(keys.dead())).isZero();
		assertThat(template.keys(keys.base() + "t:*")).isEmpty();
		assertThat(StoreInvariantChecks.violations(template, redis.keyPrefix(), queue)).isEmpty();
	}

}
