package dev.delayedtasks.testing;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * A cached context that Spring paused while another test class ran comes back with its
 * workers running, its prefix, and nothing left from its earlier tests.
 */
class ContextCacheIntegrationTests {

	@Test
	void aCachedContextWorksAgainAfterAnotherContextRan() {
		EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
			.configurationParameter(ContextCacheScenarios.LAUNCHED, "true")
			.configurationParameter("junit.jupiter.testclass.order.default",
					"org.junit.jupiter.api.ClassOrderer$OrderAnnotation")
			.selectors(selectClass(ContextCacheScenarios.First.class), selectClass(ContextCacheScenarios.Other.class),
					selectClass(ContextCacheScenarios.SameAsFirst.class))
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
		results.testEvents().assertStatistics((stats) -> stats.started(3).succeeded(3));
	}

}
