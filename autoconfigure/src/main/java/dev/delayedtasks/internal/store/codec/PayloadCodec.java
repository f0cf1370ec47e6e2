package dev.delayedtasks.internal.store.codec;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.NonRetryableTaskException;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.util.unit.DataSize;

/**
 * Turns payloads into the stored envelope {@code {"h":{headers},"b":payload}} and back,
 * with Jackson. Uses a copy of the application's mapper with default typing switched off:
 * no class names are ever written to or trusted from Redis; the handler's declared
 * parameter type alone decides what a payload becomes.
 * <p>
 * What it writes, the reading side can read: an envelope is checked against the
 * {@link PayloadLimits} and read back with the mapper's own {@link StreamReadConstraints}
 * (number and name lengths, nesting depth), so a task the workers would refuse on every
 * delivery is refused at scheduling instead ({@link EnvelopeChecks}).
 * <p>
 * The messages of its exceptions never hold payload or header values: they name the type,
 * the place in the document and the rule (see {@link JacksonFailures}), unless the
 * application opts in to see the values.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class PayloadCodec {

	private static final int DIGEST_BYTES = 12;

	/** How much of an unreadable envelope is shown when values may be shown. */
	private static final int SHOWN_CHARACTERS = 100;

	private final JsonMapper mapper;

	private final JsonMapper canonicalMapper;

	private final EnvelopeChecks checks;

	private final long maxResultBytes;

	private final boolean includePayloadInErrors;

	/**
	 * Create a codec with the default header limits, whose errors show no payload or
	 * header values.
	 * @param mapper the application's mapper (copied, never changed)
	 * @param maxPayloadSize the largest serialized payload accepted
	 */
	public PayloadCodec(JsonMapper mapper, DataSize maxPayloadSize) {
		this(mapper, PayloadLimits.of(maxPayloadSize), false);
	}

	/**
	 * Create a codec.
	 * @param mapper the application's mapper (copied, never changed)
	 * @param limits the limits of what a caller may send
	 * @param includePayloadInErrors whether error messages may quote stored envelopes and
	 * Jackson's own messages, which repeat payload and header values
	 */
	public PayloadCodec(JsonMapper mapper, PayloadLimits limits, boolean includePayloadInErrors) {
		this.mapper = mapper.rebuild().deactivateDefaultTyping().build();
		this.canonicalMapper = this.mapper.rebuild()
			.enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
			.enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
			.disable(MapperFeature.SORT_CREATOR_PROPERTIES_FIRST)
			.build();
		this.checks = new EnvelopeChecks(this.mapper, limits, includePayloadInErrors);
		this.maxResultBytes = limits.maxResultSize().toBytes();
		this.includePayloadInErrors = includePayloadInErrors;
	}

	/**
	 * The stored envelope of a payload and its headers.
	 * @param queue the queue, for error messages
	 * @param payload the payload, or {@code null} for none
	 * @param headers the headers
	 * @return the envelope JSON
	 * @throws InvalidTaskRequestException if Jackson cannot write the payload, the
	 * payload or the headers are over a limit, or the reading side's
	 * {@link StreamReadConstraints} would refuse the envelope
	 */
	public String envelope(String queue, @Nullable Object payload, Map<String, String> headers) {
		this.checks.headersBeforeWriting(queue, headers);
		// No headers is the common case: the same two characters every time.
		String headerJson = headers.isEmpty() ? "{}" : write(queue, headers, this.mapper);
		this.checks.headersJson(queue, headerJson);
		String body = write(queue, payload, this.mapper);
		this.checks.payloadJson(queue, payload, body);
		String envelope = "{\"h\":" + headerJson + ",\"b\":" + body + "}";
		this.checks.readable(queue, payload, envelope, headerJson.length());
		return envelope;
	}

	/**
	 * Read an envelope.
	 * @param envelope the stored JSON
	 * @return the headers and the payload tree
	 * @throws IllegalArgumentException if the envelope is not one
	 */
	public Envelope read(String envelope) {
		try {
			JsonNode tree = this.mapper.readTree(envelope);
			if (!(tree instanceof ObjectNode object) || !object.has("b")) {
				throw new IllegalArgumentException("not a task envelope: " + (this.includePayloadInErrors
						? abbreviate(envelope) : "JSON " + tree.getNodeType().name().toLowerCase(Locale.ROOT)
								+ ((tree instanceof ObjectNode) ? " without the payload field \"b\"" : "")));
			}
			Map<String, String> headers = new LinkedHashMap<>();
			JsonNode headerNode = object.get("h");
			if (headerNode != null && headerNode.isObject()) {
				headerNode.properties().forEach((entry) -> headers.put(entry.getKey(), entry.getValue().asString()));
			}
			return new Envelope(headers, object.get("b"));
		}
		catch (JacksonException ex) {
			if (this.includePayloadInErrors) {
				throw new IllegalArgumentException("not valid JSON: " + ex.getOriginalMessage(), ex);
			}
			throw new IllegalArgumentException("not valid JSON: " + JacksonFailures.describe(ex));
		}
	}

	/**
	 * The payload of a stored envelope as JSON, for an operator to inspect or mend: the
	 * body when it reads as an envelope, else what is stored.
	 * @param stored the stored value
	 * @return the payload JSON, or the stored value as is
	 */
	public String bodyJson(String stored) {
		try {
			return read(stored).body().toString();
		}
		catch (IllegalArgumentException ex) {
			return stored;
		}
	}

	/**
	 * Why a stored envelope cannot be read, for the dead letter of its task: the rule it
	 * breaks, without its content unless the application opted in.
	 * @param envelope the stored JSON
	 * @return the reason, for example {@code not valid JSON: StreamReadException at line
	 * 1, column 58: malformed JSON}
	 */
	public String describeUnreadable(String envelope) {
		String reason;
		try {
			read(envelope);
			reason = "it reads as an envelope now";
		}
		catch (IllegalArgumentException ex) {
			reason = ex.getMessage();
		}
		catch (RuntimeException | StackOverflowError ex) {
			reason = ex.getClass().getName();
		}
		if (!this.includePayloadInErrors) {
			return reason;
		}
		return reason + ": "
				+ ((envelope.length() > SHOWN_CHARACTERS) ? envelope.substring(0, SHOWN_CHARACTERS) + "..." : envelope);
	}

	/**
	 * Convert a payload tree to the handler's parameter type.
	 * @param body the payload tree
	 * @param type the target type, generics included
	 * @param <T> the target type
	 * @return the payload
	 * @throws IllegalArgumentException if the tree cannot be converted
	 */
	public <T> T convert(JsonNode body, JavaType type) {
		try {
			return this.mapper.treeToValue(body, type);
		}
		catch (JacksonException ex) {
			if (this.includePayloadInErrors) {
				throw new IllegalArgumentException(
						"cannot convert the payload to " + type.toCanonical() + ": " + ex.getOriginalMessage(), ex);
			}
			// Jackson's exception repeats the value in its message and names map keys in
			// its path: only the application's own exception (a constructor that threw)
			// is kept as the cause.
			throw new IllegalArgumentException(
					"cannot convert the payload to " + type.toCanonical() + ": " + JacksonFailures.describe(ex),
					JacksonFailures.applicationCause(ex));
		}
	}

	/**
	 * Build what reading and writing a payload of this type takes (Jackson finds and
	 * caches its deserializers and serializers), and read one envelope, so that a
	 * handler's first task is read, and the first task of its type scheduled, as fast as
	 * later ones.
	 * @param type the handler's payload type
	 */
	public void prepare(JavaType type) {
		try {
			this.mapper.readerFor(type);
			this.mapper.writerFor(type);
			read("{\"h\":{},\"b\":null}");
		}
		catch (JacksonException | IllegalArgumentException ex) {
			// The type cannot be read at all: its first task says so, as it would
			// without this.
		}
	}

	/**
	 * The Jackson type of a Java type, generics included.
	 * @param type the type
	 * @return the Jackson type
	 */
	public JavaType type(Type type) {
		return this.mapper.constructType(type);
	}

	/**
	 * The fixed-size digest of an explicit unique key within a queue.
	 * @param queue the queue
	 * @param uniqueKey the key
	 * @return 16 URL-safe characters
	 */
	public String uniqueDigest(String queue, String uniqueKey) {
		return digest("k\n" + queue + "\n" + uniqueKey);
	}

	/**
	 * The fixed-size digest of a payload within a queue, from its canonical JSON (sorted
	 * properties and map keys), so equal payloads give equal digests.
	 * @param queue the queue
	 * @param payload the payload
	 * @return 16 URL-safe characters
	 */
	public String payloadDigest(String queue, @Nullable Object payload) {
		return digest("p\n" + queue + "\n" + write(queue, payload, this.canonicalMapper));
	}

	private static String digest(String text) {
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
			byte[] truncated = new byte[DIGEST_BYTES];
			System.arraycopy(hash, 0, truncated, 0, DIGEST_BYTES);
			return Base64.getUrlEncoder().withoutPadding().encodeToString(truncated);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

	private String write(String queue, @Nullable Object value, JsonMapper mapper) {
		try {
			return mapper.writeValueAsString(value);
		}
		catch (JacksonException ex) {
			String prefix = "Payload of type " + typeName(value) + " for queue '" + queue
					+ "' cannot be written as JSON: ";
			if (this.includePayloadInErrors) {
				throw new InvalidTaskRequestException(prefix + ex.getOriginalMessage(), ex);
			}
			Throwable cause = JacksonFailures.applicationCause(ex);
			// A getter or serializer of the application that threw: its message is its
			// own choice and says what went wrong.
			String own = (cause != null && cause.getMessage() != null) ? " (" + cause.getMessage() + ")" : "";
			InvalidTaskRequestException failure = new InvalidTaskRequestException(
					prefix + JacksonFailures.describe(ex) + own);
			if (cause != null) {
				failure.initCause(cause);
			}
			throw failure;
		}
	}

	/**
	 * Write a handler's return value as the JSON kept with its task's outcome.
	 * @param queue the queue
	 * @param value the value
	 * @return the JSON
	 * @throws NonRetryableTaskException when Jackson cannot write it, or its JSON is
	 * larger than {@code delayed-tasks.results.max-size}: running the task again would
	 * return the same
	 */
	public String result(String queue, Object value) {
		String json;
		try {
			json = this.mapper.writeValueAsString(value);
		}
		catch (JacksonException ex) {
			throw new NonRetryableTaskException("The result of type " + typeName(value) + " of a task of queue '"
					+ queue + "' cannot be written as JSON: " + JacksonFailures.describe(ex), ex);
		}
		long bytes = EnvelopeChecks.utf8Length(json);
		if (bytes > this.maxResultBytes) {
			throw new NonRetryableTaskException("The result of type " + typeName(value) + " of a task of queue '"
					+ queue + "' is " + bytes + " bytes as JSON, more than delayed-tasks.results.max-size ("
					+ this.maxResultBytes + " bytes)");
		}
		return json;
	}

	/**
	 * Read a result kept with a task's outcome.
	 * @param <T> the type
	 * @param json the JSON
	 * @param type the type
	 * @return the value
	 * @throws IllegalArgumentException when it cannot be read as that type
	 */
	public <T> T readResult(String json, Class<T> type) {
		try {
			return this.mapper.readValue(json, type);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException(
					"The result cannot be read as " + type.getName() + ": " + JacksonFailures.describe(ex), ex);
		}
	}

	static String typeName(@Nullable Object value) {
		return (value != null) ? value.getClass().getName() : "null";
	}

	private static String abbreviate(String text) {
		return (text.length() > 80) ? text.substring(0, 80) + "..." : text;
	}

	/**
	 * A stored envelope, read back.
	 *
	 * @param headers the headers
	 * @param body the payload tree
	 */
	public record Envelope(Map<String, String> headers, JsonNode body) {

	}

}
