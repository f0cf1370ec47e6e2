package dev.delayedtasks.store;

import java.util.Map;

import dev.delayedtasks.DelayedTaskException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * The startup checks that depend on what each master runs: a warning when a server lacks
 * the Lua sandbox fixes ({@link LuaSandboxFixes}), and, with
 * {@code delayed-tasks.scripts.mode=functions}, Redis 7 and the function library on every
 * master ({@link FunctionLibraries}). The versions come from {@code HELLO}, which needs
 * no ACL grant. A Redis that does not answer gets a warning, not a failed startup, as in
 * the other checks: the first call then fails with the reason.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisServerCheck {

	private static final Log logger = LogFactory.getLog(RedisServerCheck.class);

	private final RedisMasters masters;

	private final @Nullable FunctionLibraries libraries;

	/**
	 * Check the given masters.
	 * @param masters the masters
	 * @param libraries the function library to check or load, or {@code null} in eval
	 * mode
	 */
	public RedisServerCheck(RedisMasters masters, @Nullable FunctionLibraries libraries) {
		this.masters = masters;
		this.libraries = libraries;
	}

	/**
	 * Run the checks.
	 * @throws DelayedTaskException in functions mode, when a master is older than Redis 7
	 * or lacks the library
	 */
	public void verify() {
		Map<String, RedisVersion> versions;
		try {
			versions = this.masters.versions();
		}
		catch (DataAccessException ex) {
			logger.warn("Could not read the Redis version (HELLO: " + StoreScripts.reason(ex) + "); make sure Redis "
					+ "carries the fixes for " + LuaSandboxFixes.CVES + " (README: Deployment, ACL)"
					+ ((this.libraries != null) ? " and has the function library " + this.libraries.library().name()
							: ""));
			return;
		}
		LuaSandboxFixes.warnIfUnpatched(versions);
		if (this.libraries != null) {
			this.libraries.verify(versions);
		}
	}

}
