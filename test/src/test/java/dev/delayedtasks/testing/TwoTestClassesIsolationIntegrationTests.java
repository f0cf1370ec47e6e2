package dev.delayedtasks.testing;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * Two test classes that run at once, each with an application context of its own, on the
 * one Redis of the test run, under key prefixes of their own: neither sees the other's
 * tasks, runs or clock.
 */
class TwoTestClassesIsolationIntegrationTests {

	@Test
	void twoTestClassesRunningAtOnceOnOneRedisSeeOnlyTheirOwnTasks() {
		EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
			.configurationParameter(IsolationScenarios.LAUNCHED, "true")
			.configurationParameter("junit.jupiter.execution.parallel.enabled", "true")
			.configurationParameter("junit.jupiter.execution.parallel.mode.classes.default", "concurrent")
			.configurationParameter("junit.jupiter.execution.parallel.config.strategy", "fixed")
			.configurationParameter("junit.jupiter.execution.parallel.config.fixed.parallelism", "2")
			.selectors(selectClass(IsolationScenarios.First.class), selectClass(IsolationScenarios.Second.class))
			.execute();
		List<String> failures = results.testEvents()
			.failed()
			.stream()
			.map((event) -> event.getPayload(TestExecutionResult.class)
				.flatMap(TestExecutionResult::getThrowable)
				.map(Throwable::toString)
				.orElse(event.toString()))
			.toList();
		assertThat(failures).isEmpty();
		results.testEvents().assertStatistics((stats) -> stats.started(2).succeeded(2));
		assertThat(IsolationScenarios.seen.get("first.redis")).isEqualTo(IsolationScenarios.seen.get("second.redis"));
		assertThat(IsolationScenarios.seen.get("first.prefix")).startsWith("dtt-")
			.isNotEqualTo(IsolationScenarios.seen.get("second.prefix"));
	}

}
