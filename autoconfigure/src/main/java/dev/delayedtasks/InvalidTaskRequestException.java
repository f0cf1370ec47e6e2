package dev.delayedtasks;

/**
 * Thrown before anything is written when a request breaks a rule: an invalid queue name
 * or id, a delay or instant that cannot be represented, a payload that cannot be
 * serialized, is too large or would be refused by the workers' JSON reader, too many or
 * too large headers. The message names the rule and the offending value, except payload
 * and header values, which it never quotes: it names their type, size or place instead.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class InvalidTaskRequestException extends DelayedTaskException {

	/**
	 * Create an exception.
	 * @param message the offending value and the rule it breaks
	 */
	public InvalidTaskRequestException(String message) {
		super(message);
	}

	/**
	 * Create an exception with a cause.
	 * @param message the offending value and the rule it breaks
	 * @param cause the cause, for example Jackson's exception
	 */
	public InvalidTaskRequestException(String message, Throwable cause) {
		super(message, cause);
	}

}
