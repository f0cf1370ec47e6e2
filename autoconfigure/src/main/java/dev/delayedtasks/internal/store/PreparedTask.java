package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.function.ToIntFunction;
import java.util.regex.Pattern;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.codec.EnvelopeChecks;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import org.jspecify.annotations.Nullable;

/**
 * A validated request, in the form the {@code enqueue} script takes it.
 *
 * @param queue the queue
 * @param id the task id (generated before the call, so a retry after a timeout can reuse
 * it)
 * @param absolute whether {@code time} is an epoch instant rather than a delay
 * @param time the delay or the instant, in milliseconds
 * @param maxAttempts runs allowed in all
 * @param uniqueTtlMs how long the unique key blocks duplicates, 0 for none
 * @param uniqueDigest the unique key's digest, or {@code null}
 * @param envelope the payload envelope, or {@code null} when it was dropped to be written
 * again just before it is sent ({@link #withoutEnvelope()})
 * @param envelopeBytes the size of the envelope in UTF-8
 * @param request the request, with the headers that go with it, to write the envelope
 * again from
 * @param expiry the script's expiry argument: {@code 0} for none, {@code D} and a time to
 * live or {@code A} and an epoch instant, in milliseconds
 * @param outcome the script's outcome argument: {@code 0} for no outcome record, else how
 * long to keep it in milliseconds, and a space and the channel of a tracking producer
 * @author delayed-tasks
 * @since 0.1.0
 */
public record PreparedTask(String queue, TaskId id, boolean absolute, long time, int maxAttempts, long uniqueTtlMs,
		@Nullable String uniqueDigest, @Nullable String envelope, int envelopeBytes, TaskRequest request, String expiry,
		String outcome) {

	/**
	 * The latest instant a task may run at: keeps every due time exact in a Lua number
	 * and a ZSET score.
	 */
	static final Instant LATEST = LocalDate.of(9999, 12, 31).atStartOfDay().toInstant(ZoneOffset.UTC);

	private static final int MAX_ATTEMPTS_LIMIT = 1000;

	/** Each unit of cost is one entry of a rate window: bounded, so is a lease's work. */
	private static final int MAX_COST = 1000;

	/** Header names the library sets on tasks it creates; producers may not. */
	static final String RESERVED_HEADER_PREFIX = "dt-";

	/**
	 * A recurring occurrence's id: a schedule id, a colon, the tick in epoch ms (13
	 * digits from 2001 to 2286), so ids such as {@code order:42} stay free.
	 */
	private static final Pattern OCCURRENCE_ID = Pattern.compile("[A-Za-z0-9._-]{1,40}:[0-9]{13}");

	/** The outcome argument of a task whose outcome nobody keeps. */
	static final String NO_OUTCOME = "0";

	/**
	 * Validate a request and serialize its payload; nothing is written.
	 * @param request the request
	 * @param codec the payload codec
	 * @param defaultMaxAttempts the queue's max attempts when the request sets none
	 * @return the prepared task
	 * @throws InvalidTaskRequestException naming the offending value and the rule
	 */
	public static PreparedTask of(TaskRequest request, PayloadCodec codec, ToIntFunction<String> defaultMaxAttempts) {
		String queue = Names.checkQueue(request.queue());
		boolean absolute = request.runAt() != null;
		long time = absolute ? instantMillis(queue, request.runAt()) : delayMillis(queue, request.delay());
		int maxAttempts = (request.maxAttempts() != null) ? request.maxAttempts()
				: defaultMaxAttempts.applyAsInt(queue);
		if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS_LIMIT) {
			throw new InvalidTaskRequestException("maxAttempts " + maxAttempts + " for queue '" + queue
					+ "' is invalid: use 1 to " + MAX_ATTEMPTS_LIMIT);
		}
		checkHeaders(queue, request.headers());
		if (request.rateKey() != null) {
			Names.checkRateKey(request.rateKey());
		}
		if (request.cost() != null && (request.cost() < 1 || request.cost() > MAX_COST)) {
			throw new InvalidTaskRequestException(
					"cost " + request.cost() + " for queue '" + queue + "' is invalid: use 1 to " + MAX_COST);
		}
		Integer priority = request.priority();
		if (priority != null && (priority < TaskRequest.MIN_PRIORITY || priority > TaskRequest.MAX_PRIORITY)) {
			throw new InvalidTaskRequestException("priority " + priority + " for queue '" + queue + "' is invalid: use "
					+ TaskRequest.MIN_PRIORITY + " to " + TaskRequest.MAX_PRIORITY);
		}
		if (request.id() != null) {
			checkNotAnOccurrence(queue, request.id());
		}
		long uniqueTtl = 0;
		String digest = null;
		if (request.uniqueKey() != null && request.uniqueFor() == null) {
			throw new InvalidTaskRequestException("Unique key '" + request.uniqueKey() + "' for queue '" + queue
					+ "' needs uniqueFor(Duration): how long the key blocks duplicates");
		}
		if (request.uniqueFor() != null) {
			uniqueTtl = positiveMillis(queue, "uniqueFor", request.uniqueFor());
			if (request.uniqueKey() != null && request.uniqueKey().isEmpty()) {
				throw new InvalidTaskRequestException("Unique key for queue '" + queue + "' is empty");
			}
			digest = (request.uniqueKey() != null) ? codec.uniqueDigest(queue, request.uniqueKey())
					: codec.payloadDigest(queue, request.payload());
		}
		String envelope = codec.envelope(queue, request.payload(), request.headers());
		TaskId id = (request.id() != null) ? request.id() : TaskId.generate();
		String expiry = expiryArgument(queue, request, absolute, time);
		return new PreparedTask(queue, id, absolute, time, maxAttempts, uniqueTtl, digest, envelope,
				EnvelopeChecks.utf8Length(envelope), request, expiry, NO_OUTCOME);
	}

	/**
	 * This task without its envelope, which {@link #envelope(PayloadCodec)} writes again
	 * when it is needed: a large {@code scheduleAll} keeps at most one script call's
	 * worth of envelopes in memory, not all of them.
	 * @return the task, validated and measured, without the envelope
	 */
	public PreparedTask withoutEnvelope() {
		return new PreparedTask(this.queue, this.id, this.absolute, this.time, this.maxAttempts, this.uniqueTtlMs,
				this.uniqueDigest, null, this.envelopeBytes, this.request, this.expiry, this.outcome);
	}

	/**
	 * This task with another due time, for a task rescheduled before it was sent.
	 * @param absolute whether {@code time} is an epoch instant rather than a delay
	 * @param time the delay or the instant, in milliseconds
	 * @return the task
	 */
	public PreparedTask withDue(boolean absolute, long time) {
		return new PreparedTask(this.queue, this.id, absolute, time, this.maxAttempts, this.uniqueTtlMs,
				this.uniqueDigest, this.envelope, this.envelopeBytes, this.request, this.expiry, this.outcome);
	}

	/**
	 * This task with its outcome kept when it ends, and told to a tracker.
	 * @param keep how long to keep the outcome record, positive
	 * @param channel the tracking producer's channel, or {@code null}
	 * @return the task
	 */
	public PreparedTask withOutcome(Duration keep, @Nullable String channel) {
		String outcome = Math.max(1, keep.toMillis()) + ((channel != null) ? " " + channel : "");
		return new PreparedTask(this.queue, this.id, this.absolute, this.time, this.maxAttempts, this.uniqueTtlMs,
				this.uniqueDigest, this.envelope, this.envelopeBytes, this.request, this.expiry, outcome);
	}

	/**
	 * Whether a producer tracks this task: its outcome names a tracker's channel.
	 * @return whether it is tracked
	 */
	public boolean tracked() {
		return this.outcome.indexOf(' ') > 0;
	}

	/**
	 * The envelope: the one kept, or written again from the request.
	 * @param codec the payload codec
	 * @return the envelope JSON
	 */
	String envelope(PayloadCodec codec) {
		return (this.envelope != null) ? this.envelope
				: codec.envelope(this.queue, this.request.payload(), this.request.headers());
	}

	/**
	 * Convert a reschedule target to the script's (mode, time) pair.
	 * @param queue the queue
	 * @param delay the delay, or {@code null}
	 * @param runAt the instant, or {@code null}
	 * @return the milliseconds: an epoch instant when {@code runAt} is set, else a delay
	 */
	public static long dueArgument(String queue, @Nullable Duration delay, @Nullable Instant runAt) {
		return (runAt != null) ? instantMillis(queue, runAt) : delayMillis(queue, delay);
	}

	/**
	 * The expiry as the script takes it, checked against the due time: a task that
	 * expired before it is due could never run.
	 * @param queue the queue
	 * @param request the request
	 * @param absolute whether {@code time} is an epoch instant
	 * @param time the due time's milliseconds
	 * @return the argument
	 */
	private static String expiryArgument(String queue, TaskRequest request, boolean absolute, long time) {
		if (request.expiresAt() != null) {
			long expiresAt = instantMillis(queue, request.expiresAt());
			long due = absolute ? time : System.currentTimeMillis() + time;
			if (expiresAt <= due) {
				throw new InvalidTaskRequestException("Expiry " + request.expiresAt() + " for queue '" + queue
						+ "' is not after the time the task is due (" + Instant.ofEpochMilli(due)
						+ "): it could never run");
			}
			return "A" + expiresAt;
		}
		if (request.expireAfter() != null) {
			long ttl = positiveMillis(queue, "expireAfter", request.expireAfter());
			long delay = absolute ? time - System.currentTimeMillis() : time;
			if (ttl <= delay) {
				throw new InvalidTaskRequestException("expireAfter " + request.expireAfter() + " for queue '" + queue
						+ "' is not longer than the delay before the task is due (" + Duration.ofMillis(delay)
						+ "): it could never run");
			}
			return "D" + ttl;
		}
		return "0";
	}

	private static long delayMillis(String queue, @Nullable Duration delay) {
		if (delay == null) {
			return 0;
		}
		if (delay.isNegative()) {
			throw new InvalidTaskRequestException(
					"Delay " + delay + " for queue '" + queue + "' is negative: use Duration.ZERO or a positive delay");
		}
		// Not Duration.between: in nanoseconds the ~8,000 years overflow, and it throws
		// and
		// catches an ArithmeticException, with its stack trace, on every call.
		Instant now = Instant.now();
		Duration longest = Duration.ofSeconds(LATEST.getEpochSecond() - now.getEpochSecond(), -now.getNano());
		if (delay.compareTo(longest) > 0) {
			throw new InvalidTaskRequestException("Delay " + delay + " for queue '" + queue
					+ "' is too long: the due time must not be later than " + LATEST);
		}
		return delay.toMillis();
	}

	private static long instantMillis(String queue, Instant runAt) {
		if (runAt.isBefore(Instant.EPOCH) || runAt.isAfter(LATEST)) {
			throw new InvalidTaskRequestException("Instant " + runAt + " for queue '" + queue
					+ "' cannot be represented: use an instant between " + Instant.EPOCH + " and " + LATEST);
		}
		return runAt.toEpochMilli();
	}

	private static long positiveMillis(String queue, String what, Duration duration) {
		if (duration.isNegative() || duration.isZero() || duration.compareTo(Duration.ofDays(36500)) > 0) {
			throw new InvalidTaskRequestException(what + " " + duration + " for queue '" + queue
					+ "' is invalid: use a positive duration up to 100 years");
		}
		return Math.max(1, duration.toMillis());
	}

	private static void checkHeaders(String queue, Map<String, String> headers) {
		headers.forEach((name, value) -> {
			if (name == null || name.isEmpty() || value == null) {
				throw new InvalidTaskRequestException("Header '" + name + "'='" + value + "' for queue '" + queue
						+ "' is invalid: names must be non-empty and values non-null");
			}
			if (name.startsWith(RESERVED_HEADER_PREFIX)) {
				throw new InvalidTaskRequestException("Header '" + name + "' for queue '" + queue
						+ "' is reserved: header names starting with '" + RESERVED_HEADER_PREFIX
						+ "' belong to delayed-tasks (a recurring occurrence is marked with one)");
			}
		});
	}

	/**
	 * Refuse the ids of recurring occurrences, {@code <schedule id>:<tick in epoch ms>}:
	 * a task created early under one would stand in for the tick.
	 * @param queue the queue
	 * @param id the caller's id
	 */
	private static void checkNotAnOccurrence(String queue, TaskId id) {
		if (OCCURRENCE_ID.matcher(id.value()).matches()) {
			throw new InvalidTaskRequestException("Task id '" + id + "' for queue '" + queue
					+ "' is reserved: ids of the form <schedule id>:<epoch milliseconds> are the occurrences of"
					+ " recurring schedules; use another form, such as '" + id.value().replace(':', '-') + "'");
		}
	}

}
