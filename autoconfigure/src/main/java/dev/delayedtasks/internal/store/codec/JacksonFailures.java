package dev.delayedtasks.internal.store.codec;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.exc.UnexpectedEndOfInputException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.exc.InvalidDefinitionException;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.exc.InvalidNullException;
import tools.jackson.databind.exc.InvalidTypeIdException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.PropertyBindingException;
import tools.jackson.databind.exc.ValueInstantiationException;

/**
 * Describes a Jackson failure by its structure, never by its message: the exception type,
 * where in the document it happened (property names and array indexes, or a line and
 * column) and the rule that was broken (the target type, the limit). Jackson's own
 * messages repeat the offending value ({@code Cannot deserialize value of type int from
 * String "alice@example.com"}) and its paths name map keys, which are data too; both end
 * up in dead letters, logs and traces, so neither is used. The messages of
 * {@link StreamConstraintsException} are the one exception: they name a length and a
 * limit, never content.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class JacksonFailures {

	/** The most path segments shown: the innermost ones say where the problem is. */
	private static final int MAX_SEGMENTS = 12;

	/** Longer property names are cut: a name can be as long as the reader allows. */
	private static final int MAX_NAME_LENGTH = 64;

	private JacksonFailures() {
	}

	/**
	 * Describe a failure without any value from the document.
	 * @param failure the failure
	 * @return for example {@code InvalidFormatException at $.user.age: not a valid int}
	 */
	static String describe(JacksonException failure) {
		StringBuilder text = new StringBuilder(failure.getClass().getSimpleName());
		String path = path(failure.getPath());
		if (!path.isEmpty()) {
			text.append(" at ").append(path);
		}
		else {
			String location = location(failure.getLocation());
			if (!location.isEmpty()) {
				text.append(" at ").append(location);
			}
		}
		String rule = rule(failure);
		if (!rule.isEmpty()) {
			text.append(": ").append(rule);
		}
		return text.toString();
	}

	/**
	 * The application's own exception behind a Jackson failure (a getter, a constructor
	 * or a custom (de)serializer that threw), which keeps its message: what it says is
	 * the application's choice.
	 * @param failure the failure
	 * @return the innermost cause that is not Jackson's, or {@code null}
	 */
	static @Nullable Throwable applicationCause(JacksonException failure) {
		Throwable cause = failure.getCause();
		Throwable found = null;
		for (int depth = 0; cause != null && depth < 16; depth++) {
			if (!(cause instanceof JacksonException)) {
				found = cause;
				break;
			}
			cause = cause.getCause();
		}
		return found;
	}

	/**
	 * A line and column, for failures that have no path.
	 * @param location the location, or {@code null}
	 * @return for example {@code line 1, column 18}, or {@code ""}
	 */
	static String location(@Nullable TokenStreamLocation location) {
		if (location == null || location == TokenStreamLocation.NA || location.getLineNr() < 1) {
			return "";
		}
		return "line " + location.getLineNr() + ", column " + location.getColumnNr();
	}

	private static String rule(JacksonException failure) {
		if (failure instanceof StreamConstraintsException) {
			// "Number value length (1001) exceeds the maximum allowed (1000, from
			// `StreamReadConstraints.getMaxNumberLength()`)": lengths and limits only.
			return String.valueOf(failure.getOriginalMessage());
		}
		if (failure instanceof InvalidNullException ex) {
			return "null is not allowed for " + typeName(ex.getTargetType());
		}
		if (failure instanceof InvalidFormatException ex) {
			return "not a valid " + typeName(ex.getTargetType());
		}
		if (failure instanceof PropertyBindingException ex) {
			return "property not accepted by " + typeName(ex.getReferringClass());
		}
		if (failure instanceof InvalidTypeIdException ex) {
			return "unknown type id for " + typeName(ex.getBaseType());
		}
		if (failure instanceof MismatchedInputException ex) {
			return "the JSON value does not fit " + typeName(ex.getTargetType());
		}
		if (failure instanceof ValueInstantiationException ex) {
			Throwable cause = applicationCause(ex);
			return typeName(ex.getType()) + " could not be created"
					+ ((cause != null) ? ": its creator threw " + cause.getClass().getName() : "");
		}
		if (failure instanceof InvalidDefinitionException ex) {
			return "Jackson cannot handle type " + typeName(ex.getType())
					+ " (for its reason, set delayed-tasks.include-payload-in-errors)";
		}
		if (failure instanceof InputCoercionException ex) {
			return "number out of range of " + typeName(ex.getTargetType());
		}
		if (failure instanceof UnexpectedEndOfInputException) {
			return "the JSON ends too early";
		}
		if (failure instanceof StreamReadException) {
			return "malformed JSON";
		}
		Throwable cause = applicationCause(failure);
		return (cause != null) ? "threw " + cause.getClass().getName() : "";
	}

	private static String path(List<JacksonException.Reference> references) {
		if (references.isEmpty()) {
			return "";
		}
		StringBuilder path = new StringBuilder("$");
		int skipped = Math.max(0, references.size() - MAX_SEGMENTS);
		if (skipped > 0) {
			path.append("...");
		}
		for (JacksonException.Reference reference : references.subList(skipped, references.size())) {
			path.append(segment(reference));
		}
		return path.toString();
	}

	private static String segment(JacksonException.Reference reference) {
		if (reference.getIndex() >= 0) {
			return "[" + reference.getIndex() + "]";
		}
		String name = reference.getPropertyName();
		if (name == null) {
			return "[?]";
		}
		if (isMap(reference.from())) {
			// A map key is data (an e-mail address, a user id), not a field name.
			return "[*]";
		}
		return "." + ((name.length() > MAX_NAME_LENGTH)
				? name.substring(0, MAX_NAME_LENGTH) + "...(" + name.length() + " characters)" : name);
	}

	private static boolean isMap(@Nullable Object from) {
		return (from instanceof Map) || (from instanceof Class<?> type && Map.class.isAssignableFrom(type));
	}

	private static String typeName(@Nullable Object type) {
		if (type instanceof JavaType javaType) {
			return javaType.toCanonical();
		}
		if (type instanceof Class<?> raw) {
			return raw.getTypeName();
		}
		return "the declared type";
	}

}
