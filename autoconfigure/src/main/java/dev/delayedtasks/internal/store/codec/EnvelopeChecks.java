package dev.delayedtasks.internal.store.codec;

import java.util.Map;

import dev.delayedtasks.InvalidTaskRequestException;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The checks an envelope passes before it is stored: the {@link PayloadLimits}, and the
 * reading side's {@link StreamReadConstraints}. Jackson checks number lengths, name
 * lengths and nesting depth while it reads, not while it writes, so without the second
 * check a 1,001-digit number or a 60,000-character property name would be stored and then
 * refused on every delivery. Messages name sizes and rules, never values.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class EnvelopeChecks {

	/**
	 * The length of <code>{"h":</code>, which comes before the headers in an envelope.
	 */
	private static final int HEADERS_START = 5;

	private final JsonMapper mapper;

	private final PayloadLimits limits;

	private final boolean includePayloadInErrors;

	EnvelopeChecks(JsonMapper mapper, PayloadLimits limits, boolean includePayloadInErrors) {
		this.mapper = mapper;
		this.limits = limits;
		this.includePayloadInErrors = includePayloadInErrors;
	}

	/**
	 * Check the count and a lower bound of the size of the headers before anything is
	 * serialized, so that 200,000 headers or a 20 MB value cost no more than counting.
	 * @param queue the queue, for the message
	 * @param headers the task's headers
	 */
	void headersBeforeWriting(String queue, Map<String, String> headers) {
		if (headers.size() > this.limits.maxHeaders()) {
			throw new InvalidTaskRequestException(headers.size() + " headers for queue '" + queue
					+ "' are over the limit of " + this.limits.maxHeaders() + " (delayed-tasks.producer.max-headers)");
		}
		long characters = 0;
		for (Map.Entry<String, String> header : headers.entrySet()) {
			characters += lengthOf(header.getKey()) + lengthOf(header.getValue());
		}
		// Every character is at least one byte of JSON.
		if (characters > this.limits.maxHeadersSize().toBytes()) {
			throw headersTooLarge(queue, "at least " + characters);
		}
	}

	void headersJson(String queue, String json) {
		int size = utf8Length(json);
		if (size > this.limits.maxHeadersSize().toBytes()) {
			throw headersTooLarge(queue, Integer.toString(size));
		}
	}

	void payloadJson(String queue, @Nullable Object payload, String json) {
		int size = utf8Length(json);
		if (size > this.limits.maxPayloadSize().toBytes()) {
			throw new InvalidTaskRequestException("Payload of type " + PayloadCodec.typeName(payload) + " for queue '"
					+ queue + "' is " + size + " bytes as JSON, over the limit of "
					+ this.limits.maxPayloadSize().toBytes() + " bytes (delayed-tasks.producer.max-payload-size)");
		}
	}

	/**
	 * Read the envelope back as the workers will, with the mapper's
	 * {@link StreamReadConstraints}.
	 * @param queue the queue, for the message
	 * @param payload the payload, for the message
	 * @param envelope the envelope as written
	 * @param headersLength the length of the headers in it
	 */
	void readable(String queue, @Nullable Object payload, String envelope, int headersLength) {
		StreamReadConstraints constraints = this.mapper.tokenStreamFactory().streamReadConstraints();
		if (constraints.hasMaxDocumentLength() && envelope.length() > constraints.getMaxDocumentLength()) {
			throw unreadable(queue, payload,
					"the envelope is " + envelope.length() + " characters, over the maximum document length of "
							+ constraints.getMaxDocumentLength() + " (StreamReadConstraints.getMaxDocumentLength())",
					null);
		}
		if (tooShortToBreak(envelope.length(), constraints)) {
			return;
		}
		// Strings are skipped unread unless one may be over the reader's limit.
		boolean readStrings = envelope.length() > constraints.getMaxStringLength();
		try (JsonParser parser = this.mapper.createParser(envelope)) {
			try {
				for (JsonToken token = parser.nextToken(); token != null; token = parser.nextToken()) {
					if (readStrings && token == JsonToken.VALUE_STRING) {
						parser.getString();
					}
				}
			}
			catch (StreamConstraintsException ex) {
				long offset = parser.currentLocation().getCharOffset();
				String where = (offset >= 0 && offset <= HEADERS_START + headersLength) ? "the headers" : "the payload";
				throw unreadable(queue, payload, ex.getOriginalMessage() + ", in " + where + " ("
						+ JacksonFailures.location(parser.currentLocation()) + ")", ex);
			}
		}
	}

	/**
	 * Whether an envelope is too short to break any limit (a number or a name longer than
	 * the whole text, or more levels than half of it, since each level takes an opening
	 * and a closing character): most envelopes are, and need no reading back.
	 * @param length the envelope's length
	 * @param constraints the mapper's read constraints
	 * @return whether the envelope needs no reading back
	 */
	private static boolean tooShortToBreak(int length, StreamReadConstraints constraints) {
		return !constraints.hasMaxTokenCount() && length <= constraints.getMaxNumberLength()
				&& length <= constraints.getMaxNameLength() && length <= constraints.getMaxStringLength()
				&& length / 2 <= constraints.getMaxNestingDepth();
	}

	private InvalidTaskRequestException unreadable(String queue, @Nullable Object payload, String rule,
			@Nullable StreamConstraintsException cause) {
		String message = "Payload of type " + PayloadCodec.typeName(payload) + " for queue '" + queue
				+ "' would be refused by the workers' JSON reader: " + rule;
		return (cause != null && this.includePayloadInErrors) ? new InvalidTaskRequestException(message, cause)
				: new InvalidTaskRequestException(message);
	}

	private InvalidTaskRequestException headersTooLarge(String queue, String size) {
		return new InvalidTaskRequestException(
				"Headers for queue '" + queue + "' are " + size + " bytes as JSON, over the limit of "
						+ this.limits.maxHeadersSize().toBytes() + " bytes (delayed-tasks.producer.max-headers-size)");
	}

	private static int lengthOf(@Nullable String text) {
		return (text != null) ? text.length() : 0;
	}

	/**
	 * The length of a text in UTF-8, without encoding it.
	 * @param text the text
	 * @return the bytes
	 */
	public static int utf8Length(CharSequence text) {
		int bytes = 0;
		int length = text.length();
		for (int i = 0; i < length; i++) {
			char c = text.charAt(i);
			if (c < 0x80) {
				bytes++;
			}
			else if (c < 0x800) {
				bytes += 2;
			}
			else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(text.charAt(i + 1))) {
				bytes += 4;
				i++;
			}
			else {
				bytes += 3;
			}
		}
		return bytes;
	}

}
