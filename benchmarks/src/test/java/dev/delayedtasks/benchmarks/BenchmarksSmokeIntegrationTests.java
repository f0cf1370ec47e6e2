package dev.delayedtasks.benchmarks;

import java.nio.file.Path;
import java.util.List;

import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every workload at its tiny size against a real Redis: behaviour, not speed.
 */
@WithRedis
class BenchmarksSmokeIntegrationTests {

	@Test
	void everyWorkloadRunsEveryTaskOnceAndNeverEarlyAndTheRunWritesAReport(TestRedis redis) {
		BenchmarkRunner runner;
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BenchmarkApplication.class).run(
				"--redis-url=" + redis.url(), "--delayed-tasks.key-prefix=" + redis.keyPrefix(), "--workload=all",
				"--size=tiny")) {
			runner = context.getBean(BenchmarkRunner.class);
			assertThat(runner.getExitCode()).isZero();
		}
		assertThat(runner.results()).extracting(WorkloadResult::workload)
			.containsExactly("startup", "redis-baseline", "delayed", "immediate", "immediate-batch",
					"immediate-tracked", "immediate-tracked16", "retry", "backlog", "memory", "steady", "producers",
					"async", "reactive", "rate-limited", "many-keys", "dashboard-overview", "dashboard-overview-cached",
					"dashboard-queue", "dashboard-charts", "dashboard-scheduled", "dashboard-ready",
					"dashboard-running", "dashboard-task", "dashboard-schedules");
		// Every workload that runs tasks: the Redis baseline runs none, and the startup
		// workload counts only lost runs.
		assertThat(runner.results()).filteredOn((result) -> result.fields().containsKey("early"))
			.hasSize(13)
			.allSatisfy((result) -> assertThat(result.fields()).containsEntry("early", "0")
				.containsEntry("lost", "0")
				.containsEntry("dup", "0"));
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("immediate"))
			.singleElement()
			.satisfies((immediate) -> {
				// Every task takes at least its enqueue call, CPU on both sides and some
				// heap.
				assertThat(Double.parseDouble(immediate.fields().get("redis_calls_per_task")))
					.isGreaterThanOrEqualTo(1);
				assertThat(Double.parseDouble(immediate.fields().get("redis_cpu_us_per_task"))).isPositive();
				assertThat(Double.parseDouble(immediate.fields().get("jvm_cpu_us_per_task"))).isPositive();
				assertThat(Double.parseDouble(immediate.fields().get("alloc_kb_per_task"))).isPositive();
			});
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("startup"))
			.singleElement()
			.satisfies(
					(startup) -> assertThat(startup.fields()).containsEntry("lost", "0").containsEntry("runs", "101"));
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("retry"))
			.singleElement()
			.satisfies((retry) -> assertThat(retry.fields()).containsEntry("retried", "20"));
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("immediate-tracked"))
			.singleElement()
			.satisfies((tracked) -> assertThat(tracked.fields())
				.containsKeys("outcomes_per_s", "outcome_record_bytes", "heap_retained_bytes_per_task")
				.doesNotContainEntry("outcome_record_bytes", "0"));
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("immediate-tracked16"))
			.singleElement()
			.satisfies((tracked) -> assertThat(tracked.fields()).containsEntry("threads", "16")
				.containsKeys("outcomes_per_s"));
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("rate-limited"))
			.singleElement()
			.satisfies((limited) -> {
				// The tiny backlog is 1,500 tasks against 1000/1s: a burst of 1,000, then
				// the rest once the first leases leave the window.
				assertThat(limited.fields()).containsEntry("rate_limit", "1000/1s").containsEntry("violations", "0");
				assertThat(Integer.parseInt(limited.fields().get("max_in_window"))).isBetween(1, 1000);
				assertThat(Long.parseLong(limited.fields().get("slot_p50_ms"))).isNotNegative();
			});
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("many-keys"))
			.singleElement()
			.satisfies((keys) -> {
				assertThat(keys.fields()).containsEntry("keys", "500")
					.containsEntry("set_aside", "0")
					.containsEntry("unclaimed", "0");
				assertThat(Long.parseLong(keys.fields().get("ks_keys"))).isPositive();
				assertThat(Double.parseDouble(keys.fields().get("script_us_per_claim"))).isPositive();
				assertThat(Double.parseDouble(keys.fields().get("control_script_us_per_claim"))).isPositive();
			});
		// The tiny fill is 2,000 tasks in 20 queues, against 200 in 5.
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("dashboard-overview"))
			.singleElement()
			.satisfies((overview) -> {
				assertThat(overview.fields()).containsEntry("queues", "20")
					.containsEntry("small_queues", "5")
					.containsEntry("max_queues", "100")
					.containsEntry("unreported_queues", "0");
				assertThat(Integer.parseInt(overview.fields().get("reported_queues"))).isGreaterThanOrEqualTo(20);
				assertThat(overview.fields().get("commands")).contains("smembers:1", "evalsha:");
				assertThat(Double.parseDouble(overview.fields().get("redis_us_per_view"))).isPositive();
			});
		assertThat(runner.results()).filteredOn((result) -> result.workload().startsWith("dashboard-"))
			.hasSize(9)
			.allSatisfy((view) -> assertThat(view.fields()).containsKeys("redis_us_per_view", "redis_cpu_us_per_view",
					"p50_ms", "p99_ms", "small_redis_us_per_view", "growth"));
		// Reads of many keys go on the shared connection: a pipeline would open one per
		// view.
		assertThat(runner.results())
			.filteredOn((result) -> List.of("dashboard-queue", "dashboard-ready", "dashboard-running")
				.contains(result.workload()))
			.hasSize(3)
			.allSatisfy((view) -> assertThat(view.fields()).containsEntry("connections_per_view", "0.0")
				.containsEntry("small_connections_per_view", "0.0"));
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("dashboard-overview-cached"))
			.singleElement()
			.satisfies((cached) -> assertThat(cached.fields()).containsEntry("calls_per_view", "0.0"));
		assertThat(runner.results()).filteredOn((result) -> result.workload().equals("dashboard-scheduled"))
			.singleElement()
			.satisfies((scheduled) -> assertThat(scheduled.fields())
				.containsEntry("commands", "sismember:1,zcard:1,zrange:1")
				.containsEntry("small_commands", "sismember:1,zcard:1,zrange:1"));
		Path report = runner.reportFile();
		assertThat(report).isNotNull().exists().isRegularFile();
		assertThat(report.getParent()).endsWith(Path.of("target", "reports"));
		assertThat(report).content().contains("<svg", "workload=delayed n=200 ");
		assertThat(redis.deleteKeys()).as("keys left under the run's prefix").isZero();
	}

}
