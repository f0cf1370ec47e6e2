package dev.delayedtasks.internal.actuate;

import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code queue} tag of {@code delayed.tasks.*} meters, as a meter filter: reported
 * queues and the first {@code max-queues} others keep their name, the rest share one tag.
 */
class BoundedQueueTagsTests {

	@Test
	void thousandsOfQueueNamesMakeAtMostTheReportedQueuesPlusMaxQueuesPlusOneSeries() {
		BoundedQueueTags tags = new BoundedQueueTags(10);
		tags.reported(Set.of("user-2999", "emails"));
		MeterRegistry meters = new SimpleMeterRegistry();
		meters.config().meterFilter(tags);
		IntStream.range(0, 3000).mapToObj((i) -> String.format("user-%04d", i)).forEach((queue) -> {
			Timer.builder("delayed.tasks.schedule").tag("queue", queue).register(meters);
			Counter.builder("other.meter").tag("queue", queue).register(meters);
		});
		Set<String> queues = meters.find("delayed.tasks.schedule")
			.meters()
			.stream()
			.map((meter) -> meter.getId().getTag("queue"))
			.collect(Collectors.toSet());
		assertThat(queues).hasSize(10 + 1 + 1)
			.contains("user-2999", "user-0000", "user-0009", BoundedQueueTags.OTHER_QUEUES);
		// Only the library's meters are touched.
		assertThat(meters.find("other.meter").meters()).hasSize(3000);
		// A queue keeps the tag it got.
		assertThat(tags.tag("user-0005")).isEqualTo("user-0005");
		assertThat(tags.tag("user-0500")).isEqualTo(BoundedQueueTags.OTHER_QUEUES);
		assertThat(tags.tag(BoundedQueueTags.OTHER_QUEUES)).isEqualTo(BoundedQueueTags.OTHER_QUEUES);
	}

}
