package dev.delayedtasks.test;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Finds server executables: {@code redis-server} or {@code valkey-server} on the
 * {@code PATH}, or the Redis 6.2 binary inside the
 * {@code com.github.codemonstur:embedded-redis} jar, extracted next to the pidfiles.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class RedisBinaries {

	static final String REDIS_SERVER = "redis-server";

	static final String VALKEY_SERVER = "valkey-server";

	private final @Nullable String path;

	private final Path extractionDirectory;

	RedisBinaries(@Nullable String path, Path extractionDirectory) {
		this.path = path;
		this.extractionDirectory = extractionDirectory;
	}

	Optional<Path> onPath() {
		return onPath(REDIS_SERVER);
	}

	Optional<Path> onPath(String executable) {
		if (this.path == null || this.path.isBlank()) {
			return Optional.empty();
		}
		return Stream.of(this.path.split(File.pathSeparator))
			.filter((entry) -> !entry.isBlank())
			.map((entry) -> Path.of(entry, executable))
			.filter(Files::isExecutable)
			.findFirst();
	}

	Optional<Path> bundled() {
		String resource = bundledResourceName();
		if (resource == null) {
			return Optional.empty();
		}
		Path target = this.extractionDirectory.resolve(resource);
		if (Files.isExecutable(target)) {
			return Optional.of(target);
		}
		try (InputStream in = RedisBinaries.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				return Optional.empty();
			}
			Files.createDirectories(this.extractionDirectory);
			Path temporary = Files.createTempFile(this.extractionDirectory, resource, ".tmp");
			Files.copy(in, temporary, StandardCopyOption.REPLACE_EXISTING);
			temporary.toFile().setExecutable(true);
			// Several test JVMs may extract at once: an atomic move keeps a half-written
			// binary from being run.
			Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
			return Optional.of(target);
		}
		catch (IOException ex) {
			throw new RedisStartFailedException("Could not extract " + resource + ": " + ex.getMessage(), ex);
		}
	}

	static @Nullable String bundledResourceName() {
		String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
		String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
		boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
		boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
		if (os.contains("linux")) {
			return x64 ? "redis-server-6.2.6-v5-linux-amd64" : arm64 ? "redis-server-6.2.7-linux-arm64" : null;
		}
		if (os.contains("mac")) {
			return x64 ? "redis-server-6.2.6-v5-darwin-amd64" : arm64 ? "redis-server-6.2.6-v5-darwin-arm64" : null;
		}
		return null;
	}

}
