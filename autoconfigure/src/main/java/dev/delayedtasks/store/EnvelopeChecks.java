package dev.delayedtasks.store;

import dev.delayedtasks.InvalidTaskRequestException;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The check an envelope passes before it is stored: the reading side's
 * {@link StreamReadConstraints}. Jackson checks number lengths, name lengths and nesting
 * depth while it reads, not while it writes, so without it a 1,001-digit number or a
 * 60,000-character property name would be stored and then refused on every delivery.
 * Messages name lengths and rules, never values.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class EnvelopeChecks {

	/** {@code {"h":} comes before the headers in an envelope. */
	private static final int HEADERS_START = 5;

	private final JsonMapper mapper;

	private final boolean includePayloadInErrors;

	EnvelopeChecks(JsonMapper mapper, boolean includePayloadInErrors) {
		this.mapper = mapper;
		this.includePayloadInErrors = includePayloadInErrors;
	}

	/**
	 * Read the envelope back as the workers will, with the mapper's
	 * {@link StreamReadConstraints}.
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

}
