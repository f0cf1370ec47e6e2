package dev.delayedtasks.internal.producer;

import org.springframework.context.SmartLifecycle;

/**
 * Stops the producer while Redis can still be reached: after the web server (its requests
 * may schedule tasks) and the workers (their handlers may too), before the connection
 * factory closes its connections. The tasks the asynchronous calls accepted get their
 * last chance to be stored then ({@link RedisDelayedTaskScheduler#close()}).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class ProducerLifecycle implements SmartLifecycle {

	/**
	 * Below the web server's stop ({@code DEFAULT_PHASE - 2048}) and the workers', above
	 * the connection factory's (0): phases stop from the highest down.
	 */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

	private final RedisDelayedTaskScheduler scheduler;

	private volatile boolean running;

	/**
	 * Stop a producer.
	 * @param scheduler the producer
	 */
	public ProducerLifecycle(RedisDelayedTaskScheduler scheduler) {
		this.scheduler = scheduler;
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		this.scheduler.close();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
