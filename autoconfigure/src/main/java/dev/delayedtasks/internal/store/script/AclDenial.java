package dev.delayedtasks.internal.store.script;

/**
 * Recognises a Redis ACL refusal, so that a failure caused by a Redis user without the
 * permissions delayed-tasks needs says so and names the fix. Redis words a refusal
 * {@code NOPERM ...} for a command the client sent, and "The user executing the script
 * can't ..." for a command or key inside a script.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class AclDenial {

	/** What to do about a refusal, appended to the error message. */
	static final String ADVICE = "the Redis user lacks a permission delayed-tasks needs: give it the ACL rules from "
			+ "the delayed-tasks documentation (docs/deployment.md, ACL), with a key pattern that covers "
			+ "delayed-tasks.key-prefix (Redis's ACL LOG names what it refused)";

	private AclDenial() {
	}

	/**
	 * Whether {@code ex} or one of its causes is an ACL refusal.
	 * @param ex the failure
	 * @return whether Redis refused for lack of permission
	 */
	public static boolean isDenial(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			String message = cause.getMessage();
			if (message != null
					&& (message.contains("NOPERM") || message.contains("The user executing the script can't"))) {
				return true;
			}
		}
		return false;
	}

}
