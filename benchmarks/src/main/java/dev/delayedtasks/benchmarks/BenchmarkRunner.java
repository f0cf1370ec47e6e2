package dev.delayedtasks.benchmarks;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.context.annotation.Profile;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Runs the chosen workloads after a warm-up, prints the header line and one line per
 * result, writes the HTML report and deletes the run's keys. The exit code is 1 when a
 * task started early, was lost or ran twice. Not in a soak worker process, which only
 * runs its handler.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Profile("!" + SoakWorkerRunner.PROFILE)
class BenchmarkRunner implements ApplicationRunner, ExitCodeGenerator {

	private static final Log logger = LogFactory.getLog(BenchmarkRunner.class);

	private final BenchmarkProperties properties;

	private final List<Workload> workloads;

	private final Warmup warmup;

	private final RedisProbe redis;

	private final HtmlReport report;

	private final Environment environment;

	private final PrintStream out = System.out;

	private final List<WorkloadResult> results = new ArrayList<>();

	private @Nullable Path reportFile;

	BenchmarkRunner(BenchmarkProperties properties, List<Workload> workloads, Warmup warmup, RedisProbe redis,
			HtmlReport report, Environment environment) {
		this.properties = properties;
		this.workloads = workloads;
		this.warmup = warmup;
		this.redis = redis;
		this.report = report;
		this.environment = environment;
	}

	@Override
	public void run(ApplicationArguments args) {
		List<Workload> chosen = chosen(this.properties.workload());
		RunFacts facts = RunFacts.of(this.redis.version(),
				this.environment.getProperty(BenchmarkRedisEnvironmentPostProcessor.REDIS_ORIGIN, "given"),
				this.redis.keyPrefix(), this.properties);
		this.out.println(facts.line());
		try {
			for (Workload workload : chosen) {
				if (workload.beforeWarmup()) {
					logger.info("Running workload " + workload.name() + " before the warm-up");
					report(workload);
				}
			}
			if (chosen.stream().anyMatch((workload) -> !workload.manual() && !workload.beforeWarmup())) {
				this.warmup.run();
			}
			for (Workload workload : chosen) {
				if (workload.beforeWarmup()) {
					continue;
				}
				logger.info("Running workload " + workload.name());
				report(workload);
			}
		}
		finally {
			long deleted = this.redis.deleteRun();
			logger.info("Deleted " + deleted + " keys under " + this.redis.keyPrefix() + ":");
		}
		Path directory = (this.properties.reportDir() != null) ? this.properties.reportDir()
				: BuildDirectory.target().resolve("reports");
		this.reportFile = this.report.write(directory, facts, this.results);
		this.out.println("report=" + this.reportFile);
	}

	private void report(Workload workload) {
		for (WorkloadResult result : workload.run()) {
			this.results.add(result);
			this.out.println(result.line());
		}
	}

	private List<Workload> chosen(String names) {
		if ("all".equalsIgnoreCase(names.trim())) {
			return this.workloads.stream().filter((workload) -> !workload.manual()).toList();
		}
		return Arrays.stream(names.split(",")).map(String::trim).map(this::workload).toList();
	}

	private Workload workload(String name) {
		return this.workloads.stream()
			.filter((workload) -> workload.name().equalsIgnoreCase(name))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("Unknown workload '" + name + "': use all or any of "
					+ this.workloads.stream().map(Workload::name).collect(Collectors.joining(", "))));
	}

	@Override
	public int getExitCode() {
		return this.results.stream().allMatch(WorkloadResult::clean) ? 0 : 1;
	}

	List<WorkloadResult> results() {
		return List.copyOf(this.results);
	}

	@Nullable Path reportFile() {
		return this.reportFile;
	}

}
