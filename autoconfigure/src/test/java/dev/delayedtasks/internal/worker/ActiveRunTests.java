package dev.delayedtasks.internal.worker;

import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.Lease;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fate of a held task: shutdown may take back only a run whose handler never started
 * or gave up, never one whose handler runs.
 */
class ActiveRunTests {

	private final AtomicInteger ends = new AtomicInteger();

	private final ActiveRun run = new ActiveRun(new Lease(TaskId.of("t1"), "token", null),
			CompletionsTests.context("t1"), System.nanoTime() + 1_000_000_000L, System.nanoTime() + 1_000_000_000L,
			this.ends::incrementAndGet);

	@Test
	void runReleasedBeforeItsThreadPicksItUpNeverStarts() {
		assertThat(this.run.release()).isTrue();
		assertThat(this.run.start(Thread.currentThread())).isFalse();
		assertThat(this.run.isHandlerRunning()).isFalse();
	}

	@Test
	void runStoppedForShutdownBeforeItStartsNeverStarts() {
		this.run.stop(ActiveRun.SHUTDOWN);
		assertThat(this.run.start(Thread.currentThread())).isFalse();
		assertThat(this.run.release()).isTrue();
	}

	@Test
	void runningHandlerCannotBeReleasedUntilItReturns() {
		assertThat(this.run.start(Thread.currentThread())).isTrue();
		assertThat(this.run.release()).isFalse();
		this.run.stop(ActiveRun.SHUTDOWN);
		// The interrupt reached the handler's thread.
		assertThat(Thread.interrupted()).isTrue();
		this.run.unbind();
		this.run.returnForRelease();
		assertThat(this.run.isHandlerRunning()).isFalse();
		assertThat(this.run.release()).isTrue();
		assertThat(this.run.finish()).isFalse();
	}

	@Test
	void finishedRunIsNeitherReleasedNorReturned() {
		this.run.start(Thread.currentThread());
		assertThat(this.run.finish()).isTrue();
		this.run.returnForRelease();
		assertThat(this.run.release()).isFalse();
		assertThat(this.run.isUndecided()).isFalse();
	}

	@Test
	void endActionRunsOnce() {
		this.run.end();
		this.run.end();
		assertThat(this.ends).hasValue(1);
	}

}
