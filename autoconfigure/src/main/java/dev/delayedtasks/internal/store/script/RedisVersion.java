package dev.delayedtasks.internal.store.script;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server's name and version as {@code HELLO} reports them ({@code redis 7.0.15},
 * {@code valkey 8.1.4}), compared by major, minor and patch.
 *
 * @param server the server's name, lower case: {@code redis} or {@code valkey}
 * @param major the major version
 * @param minor the minor version
 * @param patch the patch version
 * @author delayed-tasks
 * @since 0.1.0
 */
public record RedisVersion(String server, int major, int minor, int patch) implements Comparable<RedisVersion> {

	private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)(?:\\.(\\d+))?");

	/**
	 * Read a version such as {@code 7.0.15} (a suffix such as {@code -rc1} is ignored).
	 * @param server the server's name
	 * @param version the version
	 * @return the version
	 * @throws IllegalArgumentException when the text holds no version
	 */
	public static RedisVersion parse(String server, String version) {
		Matcher matcher = VERSION.matcher(version.strip());
		if (!matcher.lookingAt()) {
			throw new IllegalArgumentException("'" + version + "' is not a Redis version (major.minor.patch)");
		}
		return new RedisVersion(server.strip().toLowerCase(Locale.ROOT), Integer.parseInt(matcher.group(1)),
				Integer.parseInt(matcher.group(2)),
				(matcher.group(3) != null) ? Integer.parseInt(matcher.group(3)) : 0);
	}

	/**
	 * Whether this is Valkey rather than Redis.
	 * @return whether the server calls itself {@code valkey}
	 */
	public boolean isValkey() {
		return "valkey".equals(this.server);
	}

	/**
	 * Whether this version is older than {@code major.minor.patch}.
	 * @param major the major version
	 * @param minor the minor version
	 * @param patch the patch version
	 * @return whether it is older
	 */
	public boolean isBefore(int major, int minor, int patch) {
		return compareTo(new RedisVersion(this.server, major, minor, patch)) < 0;
	}

	/**
	 * Whether this is a release of the line {@code major.minor}.
	 * @param major the major version
	 * @param minor the minor version
	 * @return whether it is
	 */
	public boolean isLine(int major, int minor) {
		return this.major == major && this.minor == minor;
	}

	@Override
	public int compareTo(RedisVersion other) {
		int byMajor = Integer.compare(this.major, other.major);
		if (byMajor != 0) {
			return byMajor;
		}
		int byMinor = Integer.compare(this.minor, other.minor);
		return (byMinor != 0) ? byMinor : Integer.compare(this.patch, other.patch);
	}

	@Override
	public String toString() {
		return this.major + "." + this.minor + "." + this.patch;
	}

}
