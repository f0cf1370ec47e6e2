package dev.delayedtasks.benchmarks;

import java.io.File;
import java.nio.file.Path;

import org.springframework.boot.system.ApplicationHome;

/**
 * Finds this module's {@code target} directory from where the benchmark classes were
 * loaded, so reports and Redis pidfiles land there whatever the working directory:
 * {@code benchmarks/target} for both the jar and the {@code classes} directory.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class BuildDirectory {

	private BuildDirectory() {
	}

	static Path target() {
		File source = new ApplicationHome(BenchmarkApplication.class).getSource();
		if (source == null) {
			return Path.of("target").toAbsolutePath();
		}
		// The jar lies in target/, the classes directory is target/classes.
		return source.getAbsoluteFile().getParentFile().toPath();
	}

}
