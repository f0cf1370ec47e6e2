package dev.delayedtasks.internal.store.codec;

import org.springframework.util.unit.DataSize;

/**
 * The limits of what a caller may send with one task: the payload and the headers each
 * have their own, so an envelope is at most {@code maxPayloadSize + maxHeadersSize} and a
 * few bytes.
 *
 * @param maxPayloadSize the largest serialized payload
 * @param maxHeaders the most headers
 * @param maxHeadersSize the largest serialized header object, names and values included
 * @param maxResultSize the largest serialized handler result kept with a task's outcome
 * @author delayed-tasks
 * @since 0.1.0
 */
public record PayloadLimits(DataSize maxPayloadSize, int maxHeaders, DataSize maxHeadersSize, DataSize maxResultSize) {

	/** The default size of a handler's result. */
	public static final DataSize DEFAULT_MAX_RESULT_SIZE = DataSize.ofKilobytes(64);

	/**
	 * Limits with the default result size.
	 * @param maxPayloadSize the largest serialized payload
	 * @param maxHeaders the most headers
	 * @param maxHeadersSize the largest serialized header object
	 */
	public PayloadLimits(DataSize maxPayloadSize, int maxHeaders, DataSize maxHeadersSize) {
		this(maxPayloadSize, maxHeaders, maxHeadersSize, DEFAULT_MAX_RESULT_SIZE);
	}

	/** The default number of headers. */
	public static final int DEFAULT_MAX_HEADERS = 64;

	/**
	 * The default size of all headers: room for W3C trace context with a full 8 KiB
	 * {@code baggage}, and the application's own.
	 */
	public static final DataSize DEFAULT_MAX_HEADERS_SIZE = DataSize.ofKilobytes(16);

	/**
	 * The limits with a given payload size and the default header limits.
	 * @param maxPayloadSize the largest serialized payload
	 * @return the limits
	 */
	public static PayloadLimits of(DataSize maxPayloadSize) {
		return new PayloadLimits(maxPayloadSize, DEFAULT_MAX_HEADERS, DEFAULT_MAX_HEADERS_SIZE);
	}

}
