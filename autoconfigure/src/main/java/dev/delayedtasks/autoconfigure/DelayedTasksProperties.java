package dev.delayedtasks.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of delayed tasks, under {@code delayed-tasks}.
 *
 * @param enabled whether to enable delayed tasks
 * @param keyPrefix prefix of every Redis key; a queue's keys are
 * {@code <prefix>:{<queue>:0}:<kind>}
 * @param producer how tasks are written
 * @param worker how tasks are leased and recovered
 * @param retry default retry policy of every queue
 * @param deadLetter how long dead letters are kept
 * @author delayed-tasks
 * @since 0.1.0
 */
@ConfigurationProperties("delayed-tasks")
public record DelayedTasksProperties(@DefaultValue("true") boolean enabled, @DefaultValue("dt") String keyPrefix,
		@DefaultValue Producer producer, @DefaultValue Worker worker, @DefaultValue Retry retry,
		@DefaultValue DeadLetter deadLetter) {

	/**
	 * How tasks are written.
	 *
	 * @param maxPayloadSize largest payload accepted, as serialized JSON
	 * @param batchSize most tasks sent in one script call by scheduleAll
	 */
	public record Producer(@DefaultValue("64KB") DataSize maxPayloadSize, @DefaultValue("500") int batchSize) {

	}

	/**
	 * How tasks are leased and recovered.
	 *
	 * @param leaseDuration how long a claimed task belongs to its worker without a
	 * heartbeat
	 * @param reapGrace how long past its lease deadline a task is taken back
	 * @param maxDeliveries claims after which a task whose lease keeps expiring is
	 * dead-lettered
	 */
	public record Worker(@DefaultValue("30s") Duration leaseDuration, @DefaultValue("5s") Duration reapGrace,
			@DefaultValue("10") int maxDeliveries) {

	}

	/**
	 * Default retry policy, in Spring Framework's retry vocabulary.
	 *
	 * @param maxRetries retries after the first failed run (so a task runs at most
	 * max-retries + 1 times)
	 * @param delay back-off before the first retry
	 * @param multiplier factor applied to the back-off after each retry
	 * @param maxDelay longest back-off
	 * @param jitter random variation added to or subtracted from each back-off
	 */
	public record Retry(@DefaultValue("3") int maxRetries, @DefaultValue("1s") Duration delay,
			@DefaultValue("2") double multiplier, @DefaultValue("5m") Duration maxDelay,
			@DefaultValue("100ms") Duration jitter) {

	}

	/**
	 * How long dead letters are kept.
	 *
	 * @param retention age after which dead letters are deleted
	 * @param maxCount most dead letters kept per queue
	 */
	public record DeadLetter(@DefaultValue("14d") Duration retention, @DefaultValue("100000") int maxCount) {

	}

}
