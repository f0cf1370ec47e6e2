package dev.delayedtasks.internal.store;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.internal.store.script.LuaFile;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link QueueCounter} names every counter the scripts keep in the {@code stats} hash,
 * read from the scripts as Redis gets them (includes inlined), and gives each a
 * spelled-out name for users; unknown stored fields stay out of what users see.
 */
class QueueCounterTests {

	private static final Pattern COUNTED = Pattern
		.compile("HINCRBY', stats, '([A-Za-z_-]+)'|\\bbump\\('([A-Za-z_-]+)'");

	@Test
	void everyFieldTheScriptsCountIsACounterAndEveryCounterIsCountedByAScript() {
		Set<String> counted = new TreeSet<>();
		for (Script script : Script.values()) {
			Matcher field = COUNTED.matcher(new LuaFile(StoreScripts.source(script)).code);
			while (field.find()) {
				counted.add((field.group(1) != null) ? field.group(1) : field.group(2));
			}
		}
		assertThat(counted).as("stats fields the scripts count")
			.isEqualTo(Arrays.stream(QueueCounter.values())
				.map(QueueCounter::field)
				.collect(Collectors.toCollection(TreeSet::new)));
	}

	@Test
	void displayNamesAreUniqueSpelledOutCamelCaseWords() {
		assertThat(Arrays.stream(QueueCounter.values()).map(QueueCounter::displayName)).doesNotHaveDuplicates()
			.allMatch((name) -> name.matches("[a-z]+([A-Z][a-z]+)*"), "camel case words")
			.doesNotContain("enq", "done", "retry", "dead", "stale", "canceled", "orphan", "ghost", "fence");
	}

	@Test
	void byDisplayNameListsEveryCounterOnceWithZeroForTheUncountedAndLeavesUnknownFieldsOut() {
		QueueStats stats = new QueueStats("q", 0, 0, 0, 0, 0, -1, -1, null, -1, false, null, QueueLimits.NONE, 0, 0,
				Map.of("enq", 3L, "canceled", 1L, "fence", 7L, "from-a-newer-version", 5L));
		Map<String, Long> counters = QueueCounter.byDisplayName(stats);
		assertThat(counters.keySet()).containsExactly(
				Arrays.stream(QueueCounter.values()).map(QueueCounter::displayName).toArray(String[]::new));
		assertThat(counters).containsEntry("created", 3L)
			.containsEntry("cancelled", 1L)
			.containsEntry("lastFencingNumber", 7L)
			.containsEntry("succeeded", 0L)
			.doesNotContainKey("from-a-newer-version");
	}

}
