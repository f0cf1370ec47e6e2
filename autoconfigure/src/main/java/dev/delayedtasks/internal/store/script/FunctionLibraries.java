package dev.delayedtasks.internal.store.script;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;

import dev.delayedtasks.DelayedTaskException;
import io.lettuce.core.ScriptOutputType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisSystemException;

/**
 * Makes sure every master has the {@link FunctionLibrary} when
 * {@code delayed-tasks.scripts.mode=functions}: at startup it refuses a Redis older than
 * 7.0 (no Functions), then either loads the library on every master (when the application
 * may, {@code delayed-tasks.scripts.load-library=true}; the Redis user then needs
 * {@code FUNCTION LOAD}) or checks that an administrator did, by calling its {@code ping}
 * function on every master (needs {@code FCALL} only). A missing library stops startup
 * with the command that loads it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class FunctionLibraries {

	private static final Log logger = LogFactory.getLog(FunctionLibraries.class);

	private final RedisMasters masters;

	private final FunctionLibrary library;

	private final boolean load;

	/**
	 * Check or load the library on the given masters.
	 * @param masters the masters
	 * @param library the library
	 * @param load whether the application loads it ({@code true}) or an administrator
	 * does
	 */
	public FunctionLibraries(RedisMasters masters, FunctionLibrary library, boolean load) {
		this.masters = masters;
		this.library = library;
		this.load = load;
	}

	/**
	 * The library.
	 * @return the library
	 */
	public FunctionLibrary library() {
		return this.library;
	}

	/**
	 * The startup check.
	 * @param versions every master's version
	 * @throws DelayedTaskException when a master is older than Redis 7 or lacks the
	 * library (and the application may not load it), or when Redis refuses the check
	 */
	public void verify(Map<String, RedisVersion> versions) {
		versions.forEach((master, version) -> {
			if (version.major() < 7) {
				throw new DelayedTaskException("delayed-tasks.scripts.mode=functions needs Redis 7.0 or newer (Redis "
						+ "Functions), but " + master + " runs " + (version.isValkey() ? "Valkey " : "Redis ") + version
						+ ": set delayed-tasks.scripts.mode=eval (the default) for this server");
			}
		});
		try {
			if (this.load) {
				load();
				return;
			}
			List<String> missing = missingOn();
			if (!missing.isEmpty()) {
				throw new DelayedTaskException(missingAdvice(
						"Redis has no function library " + this.library.name() + " on " + String.join(", ", missing),
						missing.get(0)));
			}
		}
		catch (DataAccessException ex) {
			throw new DelayedTaskException("Could not " + (this.load ? "load" : "find") + " the delayed-tasks "
					+ "function library " + this.library.name() + " in Redis: " + StoreScripts.reason(ex), ex);
		}
	}

	/**
	 * The masters that lack the library: those whose answer to its {@code ping} function
	 * is "Function not found".
	 * @return the masters, by name
	 * @throws DataAccessException when a master fails otherwise
	 */
	private List<String> missingOn() {
		Map<String, Optional<Throwable>> answers = this.masters.onEveryMaster(
				(commands) -> commands.fcall(this.library.pingFunction(), ScriptOutputType.VALUE, new byte[0][])
					.handle((reply, ex) -> Optional.ofNullable(ex)));
		List<String> missing = new ArrayList<>();
		for (Map.Entry<String, Optional<Throwable>> answer : answers.entrySet()) {
			Throwable failure = answer.getValue().orElse(null);
			if (failure != null && isMissing(failure)) {
				missing.add(answer.getKey());
			}
			else if (failure != null) {
				throw new RedisSystemException(answer.getKey() + ": " + failure.getMessage(), failure);
			}
		}
		logger.debug("Redis function library " + this.library.name() + " found on " + answers.keySet());
		return missing;
	}

	/**
	 * Load the library on every master that lacks it; a master that has it already
	 * answers that the library exists, which is fine: its name carries its content's
	 * hash. Never {@code REPLACE}: another version of the application may be using its
	 * own library.
	 * @throws DataAccessException when Redis refuses
	 */
	void load() {
		this.masters.onEveryMaster((commands) -> commands.functionLoad(this.library.text()).exceptionally((ex) -> {
			if (String.valueOf(ex.getMessage()).contains("already exists")) {
				return this.library.name();
			}
			throw (ex instanceof CompletionException completion) ? completion : new CompletionException(ex);
		}));
		logger.info("Loaded the Redis function library " + this.library.name() + " on every master");
	}

	/**
	 * What to do about a missing library.
	 * @param problem what is missing
	 * @return the message
	 */
	String missingAdvice(String problem) {
		return missingAdvice(problem, null);
	}

	/**
	 * What to do about a missing library.
	 * @param problem what is missing
	 * @param master a master that lacks it ({@code host:port}), or {@code null}
	 * @return the message
	 */
	String missingAdvice(String problem, @Nullable String master) {
		int colon = (master != null) ? master.lastIndexOf(':') : -1;
		String hostAndPort = (colon > 0 && master.substring(colon + 1).chars().allMatch(Character::isDigit))
				? "-h " + master.substring(0, colon) + " -p " + master.substring(colon + 1) : "-h <host> -p <port>";
		return problem + " (delayed-tasks.scripts.mode=functions): it was never loaded, or the server lost it "
				+ "(FUNCTION FLUSH, a failover to a replica that never had it). An administrator loads it on every "
				+ "master that lacks it with: java -cp delayed-tasks-spring-boot-<version>.jar "
				+ FunctionLibrary.class.getName() + " | redis-cli " + hostAndPort
				+ " --user <admin> --askpass -x FUNCTION LOAD"
				+ " (README: Deployment, ACL); or set delayed-tasks.scripts.load-library=true to let the application"
				+ " load it (its Redis user then needs +function|load)";
	}

	/**
	 * Whether Redis answered that a function does not exist.
	 * @param ex the failure
	 * @return whether the function is missing
	 */
	static boolean isMissing(Throwable ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		return String.valueOf(cause.getMessage()).contains("Function not found")
				|| String.valueOf(ex.getMessage()).contains("Function not found");
	}

}
