package dev.delayedtasks.internal.store;

import java.util.stream.IntStream;

import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The index of known queues warns once each time it grows past
 * {@code delayed-tasks.monitoring.queue-index-warn-threshold}, not on every listing.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class QueueIndexWarningIntegrationTests {

	private static final String WARNING = "The index of delayed-tasks queues (Redis key ";

	private StoreFixture fixture;

	private QueueIndex index;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
		this.index = new QueueIndex(this.fixture.redis, this.fixture.settings.keyPrefix(), 50);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void warnsOncePerCrossingOfTheThresholdSayingWhatToDo(CapturedOutput output) {
		IntStream.range(0, 50).forEach((i) -> this.index.register("w-user-" + i));
		this.index.queues();
		assertThat(output.getOut()).doesNotContain(WARNING);

		this.index.register("w-user-50");
		for (int scrape = 0; scrape < 5; scrape++) {
			this.index.queues();
		}
		assertThat(occurrences(output.getOut(), WARNING)).isEqualTo(1);
		assertThat(output.getOut())
			.contains("holds 51 queues, more than " + "delayed-tasks.monitoring.queue-index-warn-threshold (50)")
			.contains("Use a fixed set of queue names and put the varying part in the payload")
			.contains("{\"action\":\"remove\"}")
			.contains("declared (delayed-tasks.queues.<name>) queues first");

		// Back at the threshold (an operator removed a queue), then past it again.
		assertThat(this.fixture.control.remove("w-user-50").removed()).isTrue();
		this.index.queues();
		assertThat(output.getOut()).contains("holds 50 queues, no longer more than 50");
		this.index.register("w-user-51");
		this.index.queues();
		this.index.queues();
		assertThat(occurrences(output.getOut(), WARNING)).isEqualTo(2);
	}

	private static int occurrences(String text, String part) {
		int count = 0;
		for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
			count++;
		}
		return count;
	}

}
