package dev.delayedtasks.benchmarks;

/**
 * What the measured claims of one round of the {@link ManyKeysWorkload} cost.
 *
 * @param tasks tasks they leased
 * @param claims claim calls
 * @param nanos how long they took, on this side
 * @param longestPassNanos the longest pass of one task per key, the first included
 * @param scripts script calls Redis ran meanwhile and its time in them
 * @param redisCpuMicros Redis's CPU time meanwhile
 * @param setAside tasks set aside for their key, over the whole round
 * @param windowKeys rate keys whose window ({@code ks:<key>}) existed after the claims
 * @param lineKeys rate keys whose line ({@code kp:<key>}) existed after the claims
 * @param stateBytes {@code used_memory} after the claims less once the keys' state was
 * deleted, 0 when not measured
 * @param windowUsage average {@code MEMORY USAGE} of a window, 0 when not measured
 * @param unclaimed tasks no claim leased
 * @author delayed-tasks
 * @since 0.1.0
 */
record ClaimRound(int tasks, int claims, long nanos, long longestPassNanos, RedisProbe.ScriptTime scripts,
		long redisCpuMicros, long setAside, long windowKeys, long lineKeys, long stateBytes, long windowUsage,
		int unclaimed) {

	double perSecond() {
		return this.claims * 1e9 / Math.max(1, this.nanos);
	}

	double microsPerClaim() {
		return (double) this.scripts.micros() / Math.max(1, this.claims);
	}

	double microsPerTask() {
		return (double) this.scripts.micros() / Math.max(1, this.tasks);
	}

	double redisCpuMicrosPerTask() {
		return (double) this.redisCpuMicros / Math.max(1, this.tasks);
	}

	/**
	 * Script calls Redis ran besides the claims (another client's): 0 when the figures
	 * are the claims' alone.
	 * @return the count
	 */
	long otherScriptCalls() {
		return this.scripts.calls() - this.claims;
	}

}
