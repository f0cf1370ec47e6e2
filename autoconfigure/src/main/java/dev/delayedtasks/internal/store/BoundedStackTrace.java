package dev.delayedtasks.internal.store;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * A short stack trace for the error record: laid out as Java prints one ({@code at}
 * lines, {@code Caused by:}, {@code Suppressed:}, {@code ... n more}), but with at most
 * {@value #MAX_FRAMES} frames per throwable and {@value #MAX_LENGTH} characters in all,
 * so a dead letter stays small. It names exception types and frames only, never an
 * exception's message: the top-level message is stored on its own (truncated), and the
 * messages of causes can carry task data.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class BoundedStackTrace {

	/** The most frames kept per throwable. */
	static final int MAX_FRAMES = 20;

	/** The longest trace kept, in characters. */
	static final int MAX_LENGTH = 4096;

	/** The line that ends a trace cut at {@link #MAX_LENGTH}. */
	public static final String TRUNCATED = "\t... (trace truncated)";

	private final StringBuilder text = new StringBuilder();

	private final Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());

	private boolean full;

	private BoundedStackTrace() {
	}

	/**
	 * The trace of a throwable and its causes and suppressed exceptions.
	 * @param failure the throwable
	 * @return the trace: lines without blank ones, at most {@value #MAX_LENGTH}
	 * characters
	 */
	static String of(Throwable failure) {
		BoundedStackTrace trace = new BoundedStackTrace();
		try {
			trace.append(failure, new StackTraceElement[0], "", "");
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			// User code (getCause(), getStackTrace(), getSuppressed() overridden): the
			// failure is recorded with the trace read so far.
			trace.line("[the rest of the trace could not be read: " + ex.getClass().getName() + "]");
		}
		return trace.text.toString();
	}

	/**
	 * Make any text a valid trace: no blank lines, no carriage returns and no record
	 * separator (the error record's layout relies on that), at most {@value #MAX_LENGTH}
	 * characters.
	 * @param trace the text
	 * @return the trace
	 */
	static String normalize(String trace) {
		BoundedStackTrace normalized = new BoundedStackTrace();
		trace.lines().forEach(normalized::line);
		return normalized.text.toString();
	}

	private void append(Throwable throwable, StackTraceElement[] enclosing, String caption, String indent) {
		if (this.full) {
			return;
		}
		if (!this.seen.add(throwable)) {
			line(indent + caption + "[CIRCULAR REFERENCE: " + throwable.getClass().getName() + "]");
			return;
		}
		StackTraceElement[] frames = throwable.getStackTrace();
		int unique = frames.length - inCommon(frames, enclosing);
		int shown = Math.min(unique, MAX_FRAMES);
		line(indent + caption + throwable.getClass().getName());
		for (int i = 0; i < shown; i++) {
			line(indent + "\tat " + frames[i]);
		}
		if (frames.length > shown) {
			line(indent + "\t... " + (frames.length - shown) + " more");
		}
		for (Throwable suppressed : throwable.getSuppressed()) {
			append(suppressed, frames, "Suppressed: ", indent + "\t");
		}
		Throwable cause = throwable.getCause();
		if (cause != null) {
			append(cause, frames, "Caused by: ", indent);
		}
	}

	private static int inCommon(StackTraceElement[] frames, StackTraceElement[] enclosing) {
		int m = frames.length - 1;
		int n = enclosing.length - 1;
		int common = 0;
		while (m >= 0 && n >= 0 && frames[m].equals(enclosing[n])) {
			m--;
			n--;
			common++;
		}
		return common;
	}

	private void line(String line) {
		String clean = line.replace('\r', ' ').replace('\n', ' ').replace(TaskRecords.TRACE_MARKER, ' ');
		if (this.full || clean.isBlank()) {
			return;
		}
		int separator = this.text.isEmpty() ? 0 : 1;
		if (this.text.length() + separator + clean.length() > MAX_LENGTH - TRUNCATED.length() - 1) {
			this.text.append((separator != 0) ? "\n" : "").append(TRUNCATED);
			this.full = true;
			return;
		}
		this.text.append((separator != 0) ? "\n" : "").append(clean);
	}

}
