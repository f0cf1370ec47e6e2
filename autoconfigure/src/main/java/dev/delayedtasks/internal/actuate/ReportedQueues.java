package dev.delayedtasks.internal.actuate;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import dev.delayedtasks.internal.worker.HandlerEndpoint;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Chooses which known queues the metrics gauges, the health details and the endpoint's
 * queue list report, since the index of known queues grows with every queue name ever
 * used. Queues this instance has handlers for always come first (the health indicator
 * judges them, and their number is fixed by the application's code); then declared queues
 * ({@code delayed-tasks.queues.<name>}, fixed by its configuration); then the rest by
 * name, up to {@code maxQueues} in all. By name rather than by size: the choice is the
 * same on every instance and on every refresh, so gauges do not come and go as backlogs
 * change, and it needs no Redis call per queue to make. The others are counted.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class ReportedQueues {

	private final int maxQueues;

	private final Set<String> declared;

	private final Supplier<? extends Collection<String>> handled;

	/**
	 * The queues an instance's handlers serve, read when asked.
	 * @param registry supplies the handler registry, or {@code null} on a producer-only
	 * instance
	 * @return the queues handled here
	 */
	public static Supplier<Set<String>> handledBy(Supplier<@Nullable DelayedTaskHandlerRegistry> registry) {
		return () -> {
			DelayedTaskHandlerRegistry handlers = registry.get();
			return (handlers != null)
					? handlers.getEndpoints().stream().map(HandlerEndpoint::queue).collect(Collectors.toSet())
					: Set.of();
		};
	}

	/**
	 * Create the choice.
	 * @param maxQueues the most queues reported, unless this instance handles more
	 * @param declared the declared queues
	 * @param handled the queues this instance has handlers for
	 */
	public ReportedQueues(int maxQueues, Collection<String> declared, Supplier<? extends Collection<String>> handled) {
		if (maxQueues < 1) {
			throw new IllegalArgumentException(
					"delayed-tasks.monitoring.max-queues must be at least 1, but is " + maxQueues);
		}
		this.maxQueues = maxQueues;
		this.declared = new TreeSet<>(declared);
		this.handled = handled;
	}

	/**
	 * The most queues reported, unless this instance handles more.
	 * @return the limit
	 */
	public int maxQueues() {
		return this.maxQueues;
	}

	/**
	 * Choose among the known queues: those in the index and those handled here.
	 * @param indexed the queues in the index
	 * @return the choice
	 */
	public Selection select(Collection<String> indexed) {
		Set<String> handledHere = new TreeSet<>(this.handled.get());
		Set<String> known = new TreeSet<>(indexed);
		known.addAll(handledHere);
		Set<String> chosen = new TreeSet<>(handledHere);
		for (String queue : this.declared) {
			if (chosen.size() >= this.maxQueues) {
				break;
			}
			if (known.contains(queue)) {
				chosen.add(queue);
			}
		}
		for (String queue : known) {
			if (chosen.size() >= this.maxQueues) {
				break;
			}
			chosen.add(queue);
		}
		return new Selection(new ArrayList<>(chosen), known.size(), known.size() - chosen.size());
	}

	/**
	 * The queues reported, and how many are not.
	 *
	 * @param queues the queues reported, by name
	 * @param known every known queue: in the index or handled here
	 * @param omitted the known queues not reported
	 */
	public record Selection(List<String> queues, int known, int omitted) {

		/**
		 * Create a selection.
		 * @param queues the queues reported, by name
		 * @param known every known queue
		 * @param omitted the known queues not reported
		 */
		public Selection {
			queues = List.copyOf(queues);
		}

	}

}
