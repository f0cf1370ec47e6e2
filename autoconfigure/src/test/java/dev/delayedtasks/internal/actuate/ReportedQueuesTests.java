package dev.delayedtasks.internal.actuate;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Which queues are reported when the index holds more than
 * {@code delayed-tasks.monitoring.max-queues}: handled ones, then declared ones, then by
 * name; the rest are counted.
 */
class ReportedQueuesTests {

	private static final List<String> THOUSANDS = IntStream.range(0, 3000)
		.mapToObj((i) -> String.format("user-%04d", i))
		.toList();

	@Test
	void thousandsOfQueueNamesAreCutToTheLimitAndCounted() {
		ReportedQueues reported = new ReportedQueues(100, Set.of(), Set::of);
		ReportedQueues.Selection selection = reported.select(THOUSANDS);
		assertThat(selection.queues()).hasSize(100).containsExactlyElementsOf(THOUSANDS.subList(0, 100));
		assertThat(selection.known()).isEqualTo(3000);
		assertThat(selection.omitted()).isEqualTo(2900);
	}

	@Test
	void handledQueuesComeFirstThenDeclaredOnesThenTheRestByName() {
		ReportedQueues reported = new ReportedQueues(4, Set.of("zz-declared", "yy-declared-but-unknown"),
				() -> Set.of("zz-handled"));
		ReportedQueues.Selection selection = reported.select(List.of("b", "a", "zz-declared", "c", "d"));
		// Listed by name; unknown declared queues are not invented.
		assertThat(selection.queues()).containsExactly("a", "b", "zz-declared", "zz-handled");
		assertThat(selection.known()).isEqualTo(6);
		assertThat(selection.omitted()).isEqualTo(2);
	}

	@Test
	void everyHandledQueueIsReportedEvenBeyondTheLimit() {
		ReportedQueues reported = new ReportedQueues(2, Set.of("declared"), () -> Set.of("h1", "h2", "h3"));
		ReportedQueues.Selection selection = reported.select(List.of("declared", "other"));
		assertThat(selection.queues()).containsExactly("h1", "h2", "h3");
		assertThat(selection.omitted()).isEqualTo(2);
	}

	@Test
	void theChoiceIsTheSameWhateverOrderTheIndexAnswersIn() {
		ReportedQueues reported = new ReportedQueues(10, Set.of("user-2999"), Set::of);
		List<String> reversed = new ArrayList<>(THOUSANDS);
		Collections.reverse(reversed);
		assertThat(reported.select(reversed)).isEqualTo(reported.select(THOUSANDS));
		assertThat(reported.select(THOUSANDS).queues()).contains("user-2999").hasSize(10);
	}

	@Test
	void theLimitMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ReportedQueues(0, Set.of(), Set::of))
			.withMessageContaining("delayed-tasks.monitoring.max-queues must be at least 1");
	}

}
