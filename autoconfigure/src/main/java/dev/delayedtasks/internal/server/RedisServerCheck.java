package dev.delayedtasks.internal.server;

import java.util.Map;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.internal.store.script.FunctionLibraries;
import dev.delayedtasks.internal.store.script.RedisMasters;
import dev.delayedtasks.internal.store.script.RedisVersion;
import dev.delayedtasks.internal.store.script.StoreScripts;
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

	private final SandboxCheck sandbox;

	/**
	 * Check the given masters, warning about servers without the Lua sandbox fixes.
	 * @param masters the masters
	 * @param libraries the function library to check or load, or {@code null} in eval
	 * mode
	 */
	public RedisServerCheck(RedisMasters masters, @Nullable FunctionLibraries libraries) {
		this(masters, libraries, SandboxCheck.WARN);
	}

	/**
	 * Check the given masters.
	 * @param masters the masters
	 * @param libraries the function library to check or load, or {@code null} in eval
	 * mode
	 * @param sandbox what to do about a server without the Lua sandbox fixes
	 */
	public RedisServerCheck(RedisMasters masters, @Nullable FunctionLibraries libraries, SandboxCheck sandbox) {
		this.masters = masters;
		this.libraries = libraries;
		this.sandbox = sandbox;
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
		if (this.sandbox == SandboxCheck.WARN) {
			LuaSandboxFixes.warnIfUnpatched(versions);
		}
		else if (this.sandbox == SandboxCheck.FAIL) {
			LuaSandboxFixes.describeUnpatched(versions).ifPresent((problem) -> {
				throw new DelayedTaskException(problem + ". Refusing to start (delayed-tasks.lua-sandbox-check=fail); "
						+ "upgrade Redis, or set it to warn to start anyway");
			});
		}
		if (this.libraries != null) {
			this.libraries.verify(versions);
		}
	}

	/**
	 * What to do about a server without the Lua sandbox fixes.
	 */
	public enum SandboxCheck {

		/** Refuse to start. */
		FAIL,

		/** Log a warning and start. */
		WARN,

		/** Do not check. */
		OFF

	}

}
