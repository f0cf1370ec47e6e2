package dev.delayedtasks.internal.store.script;

/**
 * Which clock the scripts read through their {@code now} include. An application runs on
 * Redis {@code TIME} alone, so nothing stored in Redis can move its clock;
 * delayed-tasks-test's auto-configuration loads the scripts on the test clock, which adds
 * the offset {@code DelayedTasksTester#advanceTime} writes to a partition's {@code meta}
 * hash. The two load different texts (different SHA-1s, a different function library), so
 * an application and a test on one Redis never run each other's scripts.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public enum ScriptClock {

	/** Redis {@code TIME}: every application. */
	REDIS("now"),

	/** Redis {@code TIME} plus the partition's test clock offset: delayed-tasks-test. */
	TEST("nowOnTestClock");

	private final String include;

	ScriptClock(String include) {
		this.include = include;
	}

	/**
	 * The include a script's {@code --- @include "now"} reads.
	 * @return the include's name
	 */
	String include() {
		return this.include;
	}

}
