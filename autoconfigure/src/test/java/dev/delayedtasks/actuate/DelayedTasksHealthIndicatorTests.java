package dev.delayedtasks.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.actuate.ReportedQueues;
import dev.delayedtasks.internal.store.QueueStats;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

/**
 * How long the {@code delayedTasks} health indicator lets a handled queue go without a
 * timer owner, measured between snapshots whose times the test sets: the clock is the
 * snapshot's, never the wall clock. {@link DelayedTasksHealthIndicatorIntegrationTests}
 * has the same states from real handlers on a real Redis.
 */
class DelayedTasksHealthIndicatorTests {

	private static final Duration TOLERANCE = Duration.ofSeconds(3);

	private final QueueSnapshots snapshots = mock(QueueSnapshots.class);

	/** When the latest snapshot was taken. */
	private Instant refreshedAt = Instant.parse("2026-01-01T00:00:00Z");

	@BeforeEach
	void snapshotsAnswerTheTestsClock() {
		given(this.snapshots.refreshedAt()).willAnswer((invocation) -> this.refreshedAt);
		given(this.snapshots.selection()).willReturn(new ReportedQueues.Selection(List.of(), 0, 0));
	}

	@Test
	void downWhenAHandledQueueHasHadNoTimerOwnerForLongerThanTheTolerance() {
		DelayedTaskHandlerRegistry registry = runningRegistry("h-ownerless");
		snapshot(stats("h-ownerless", null));
		DelayedTasksHealthIndicator indicator = new DelayedTasksHealthIndicator(this.snapshots, registry, TOLERANCE);
		// A takeover under way: UP within the tolerance.
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
		later(TOLERANCE.minusSeconds(1));
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
		later(Duration.ofSeconds(2));
		Health health = indicator.health();
		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(queueDetails(health, "h-ownerless")).containsEntry("problem", "no timer owner for over PT3S");
		// An owner again: UP, and the clock starts again next time.
		snapshot(stats("h-ownerless", "instance-2"));
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
		snapshot(stats("h-ownerless", null));
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
		later(TOLERANCE.plusSeconds(1));
		assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
	}

	@Test
	void snapshotThatCannotBeRefreshedDoesNotTurnATakeoverDown() throws InterruptedException {
		DelayedTaskHandlerRegistry registry = runningRegistry("h-frozen");
		snapshot(stats("h-frozen", null));
		Duration tolerance = Duration.ofMillis(200);
		DelayedTasksHealthIndicator indicator = new DelayedTasksHealthIndicator(this.snapshots, registry, tolerance);
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
		// Wall-clock time beyond the tolerance, but no newer snapshot (Redis is
		// unreachable): nothing says the takeover failed.
		Thread.sleep(tolerance.plusMillis(100).toMillis());
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
	}

	@Test
	void ownerlessClockStartsAgainWhenAStoppedHandlerRunsAgain() {
		DelayedTaskHandlerRegistry registry = runningRegistry("h-restarted");
		HandlerContainer handler = registry.getHandlers().iterator().next();
		snapshot(stats("h-restarted", null));
		DelayedTasksHealthIndicator indicator = new DelayedTasksHealthIndicator(this.snapshots, registry, TOLERANCE);
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
		given(handler.isRunning()).willReturn(false);
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
		later(TOLERANCE.plusSeconds(1));
		given(handler.isRunning()).willReturn(true);
		// Handled again just now: a takeover under way, not one that failed.
		assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
		later(TOLERANCE.plusSeconds(1));
		assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
	}

	@Test
	void aQueueUnderFlowControlIsUpAndShowsItsLimitsTheirUseAndAHold() {
		DelayedTaskHandlerRegistry registry = runningRegistry("h-limited");
		long now = System.currentTimeMillis();
		snapshot(new QueueStats("h-limited", now, 0, 40, 5, 0, -1, now - 60_000, "instance-1", 1000, false, "1",
				new QueueLimits(RateLimit.parse("100/1s"), 5, RateLimit.parse("10/1s")), 100, now + 30_000, Map.of()));
		Health health = new DelayedTasksHealthIndicator(this.snapshots, registry, TOLERANCE).health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(queueDetails(health, "h-limited"))
			.containsEntry("limits", "rate-limit 100/1s, global-concurrency 5, key-rate-limit 10/1s")
			.containsEntry("leased", 5L)
			.containsEntry("startsInRateWindow", 100L)
			.containsEntry("heldUntil", Instant.ofEpochMilli(now + 30_000).toString());
		snapshot(stats("h-limited", "instance-1"));
		assertThat(queueDetails(new DelayedTasksHealthIndicator(this.snapshots, registry, TOLERANCE).health(),
				"h-limited"))
			.doesNotContainKeys("limits", "leased", "startsInRateWindow", "heldUntil");
	}

	private void snapshot(QueueStats stats) {
		given(this.snapshots.current()).willReturn(Map.of(stats.queue(), stats));
	}

	/** A newer snapshot, taken {@code elapsed} after the last one. */
	private void later(Duration elapsed) {
		this.refreshedAt = this.refreshedAt.plus(elapsed);
	}

	private static DelayedTaskHandlerRegistry runningRegistry(String queue) {
		DelayedTaskHandlerRegistry registry = mock(DelayedTaskHandlerRegistry.class);
		HandlerContainer handler = mock(HandlerContainer.class);
		given(handler.queue()).willReturn(queue);
		given(handler.id()).willReturn(queue + "-handler");
		given(handler.isRunning()).willReturn(true);
		given(registry.isRunning()).willReturn(true);
		given(registry.getHandlers()).willReturn(List.of(handler));
		return registry;
	}

	private static QueueStats stats(String queue, String timerOwner) {
		return new QueueStats(queue, System.currentTimeMillis(), 0, 0, 0, 0, -1, -1, timerOwner, 1000, false, "1",
				QueueLimits.NONE, 0, 0, Map.of());
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> queueDetails(Health health, String queue) {
		Map<String, Object> queues = (Map<String, Object>) health.getDetails().get("queues");
		return (queues != null) ? (Map<String, Object>) queues.get(queue) : null;
	}

}
