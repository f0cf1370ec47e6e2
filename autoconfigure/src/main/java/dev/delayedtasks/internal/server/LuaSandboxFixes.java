package dev.delayedtasks.internal.server;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.delayedtasks.internal.store.script.RedisVersion;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Warns at startup when Redis predates the fixes for the Lua sandbox vulnerabilities of
 * October 2025: CVE-2025-49844 (use-after-free in the Lua parser, remote code execution),
 * CVE-2025-46817 (integer overflow, possible remote code execution), CVE-2025-46818 (a
 * script can run in the context of another user) and CVE-2025-46819 (out-of-bounds read,
 * crash). Whoever may run Lua ({@code EVAL}, {@code FUNCTION LOAD}) on an unpatched
 * server can use them, so the README requires a fixed release. The releases that carry
 * the fixes are Redis 6.2.20, 7.2.11, 7.4.6, 8.0.4 and 8.2.2 (the 7.0 line has none) and
 * Valkey 8.1.4; later lines are released with them. By default the application still
 * starts and the warning says which release of the server's line to install;
 * {@code delayed-tasks.lua-sandbox-check=fail} refuses to start instead.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class LuaSandboxFixes {

	/** The vulnerabilities, as the warning names them. */
	public static final String CVES = "CVE-2025-49844, CVE-2025-46817, CVE-2025-46818 and CVE-2025-46819";

	private static final Log logger = LogFactory.getLog(LuaSandboxFixes.class);

	/** Redis lines with a fixed release: major, minor, first fixed patch. */
	private static final List<int[]> REDIS_FIXED = List.of(new int[] { 6, 2, 20 }, new int[] { 7, 2, 11 },
			new int[] { 7, 4, 6 }, new int[] { 8, 0, 4 }, new int[] { 8, 2, 2 });

	/** Valkey lines with a fixed release we could verify. */
	private static final List<int[]> VALKEY_FIXED = List.of(new int[] { 8, 1, 4 });

	private LuaSandboxFixes() {
	}

	/**
	 * Log one warning naming every node whose server lacks the fixes.
	 * @param versions the version of each master, by node
	 * @return whether a warning was logged
	 */
	public static boolean warnIfUnpatched(Map<String, RedisVersion> versions) {
		Optional<String> problem = describeUnpatched(versions);
		problem.ifPresent(logger::warn);
		return problem.isPresent();
	}

	/**
	 * Say which nodes lack the fixes and what to install.
	 * @param versions the version of each master, by node
	 * @return the message, empty when every node has the fixes
	 */
	public static Optional<String> describeUnpatched(Map<String, RedisVersion> versions) {
		StringBuilder nodes = new StringBuilder();
		versions.forEach((node,
				version) -> upgrade(version).ifPresent((advice) -> nodes.append((nodes.length() > 0) ? "; " : "")
					.append(node)
					.append(" runs ")
					.append(version.isValkey() ? "Valkey " : "Redis ")
					.append(version)
					.append(": ")
					.append(advice)));
		if (nodes.length() == 0) {
			return Optional.empty();
		}
		return Optional.of("Redis lacks the fixes for the Lua sandbox vulnerabilities " + CVES
				+ " (a crafted Lua script can crash Redis, act as another user or run code on the server): " + nodes
				+ ". Whoever can run EVAL or FUNCTION LOAD on this server can exploit them; delayed-tasks requires "
				+ "a fixed release (README: Deployment, ACL)");
	}

	/**
	 * What to install instead of an unpatched version.
	 * @param version the server's version
	 * @return the advice, or empty when the version has the fixes (or, for a Valkey line
	 * whose fixed release could not be verified, when it is not known)
	 */
	static Optional<String> upgrade(RedisVersion version) {
		List<int[]> fixed = version.isValkey() ? VALKEY_FIXED : REDIS_FIXED;
		for (int[] line : fixed) {
			if (version.isLine(line[0], line[1])) {
				return version.isBefore(line[0], line[1], line[2])
						? Optional.of("upgrade to " + line[0] + "." + line[1] + "." + line[2] + " or newer")
						: Optional.empty();
			}
		}
		if (version.isValkey()) {
			return Optional.empty();
		}
		int[] last = fixed.get(fixed.size() - 1);
		if (!version.isBefore(last[0], last[1], 0)) {
			// A line released after the fixes.
			return Optional.empty();
		}
		// A line with no fixed release (7.0, 6.0 and older): the first newer line that
		// has
		// one.
		for (int[] line : fixed) {
			if (version.isBefore(line[0], line[1], 0)) {
				return Optional
					.of("the " + version.major() + "." + version.minor() + " line has no fixed release, upgrade to "
							+ line[0] + "." + line[1] + "." + line[2] + " or newer");
			}
		}
		return Optional.empty();
	}

}
