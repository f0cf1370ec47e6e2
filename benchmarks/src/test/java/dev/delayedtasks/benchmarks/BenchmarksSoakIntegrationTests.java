package dev.delayedtasks.benchmarks;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A 20-second soak, the command's smallest useful size: two worker processes, one of them
 * killed, Redis stopped for 2 s (the application starts a private Redis of its own to
 * stop), and every task checked. The real soak runs for minutes and stays manual.
 */
class BenchmarksSoakIntegrationTests {

	@Test
	void everyTaskReachesExactlyOneTerminalStateDespiteAKillAndAnOutage() {
		BenchmarkRunner runner;
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BenchmarkApplication.class).run(
				"--workload=soak", "--soak.duration=20s", "--bench.soak.rate=20",
				// One kill at 12 s; the outage at a third of the run (6.7 s) comes first.
				"--bench.soak.min-kill-interval=12s", "--bench.soak.max-kill-interval=12s", "--bench.soak.outage=2s")) {
			runner = context.getBean(BenchmarkRunner.class);
			assertThat(runner.getExitCode()).isZero();
		}
		assertThat(runner.results()).singleElement().satisfies((soak) -> {
			assertThat(soak.workload()).isEqualTo("soak");
			assertThat(soak.fields()).containsEntry("kills", "1")
				.containsEntry("early", "0")
				.containsEntry("lost", "0")
				.containsEntry("violations", "0")
				.containsKey("outage_ms")
				.doesNotContainEntry("outage_ms", "none");
			assertThat(Integer.parseInt(soak.fields().get("tasks"))).isGreaterThan(300);
			assertThat(soak.fields()).hasEntrySatisfying("succeeded", (count) -> assertThat(count).isNotEqualTo("0"))
				.hasEntrySatisfying("dead_lettered", (count) -> assertThat(count).isNotEqualTo("0"))
				.hasEntrySatisfying("cancelled", (count) -> assertThat(count).isNotEqualTo("0"));
		});
	}

}
