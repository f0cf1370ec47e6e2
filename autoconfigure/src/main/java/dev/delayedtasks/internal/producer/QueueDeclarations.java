package dev.delayedtasks.internal.producer;

import java.lang.reflect.Type;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import dev.delayedtasks.InvalidTaskRequestException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;

/**
 * The queues this application knows: those declared under
 * {@code delayed-tasks.queues.<name>} and those a {@code @DelayedTaskHandler} of this
 * instance handles. A producer-only instance has no handlers, so its declared names are
 * all it knows. Scheduling to any other queue fails when
 * {@code delayed-tasks.producer.declared-queues-only} is {@code true}, naming the closest
 * known name, and is otherwise logged once per queue as a warning: a typo in a queue name
 * makes tasks that no handler ever runs.
 * <p>
 * Handlers are looked up on every check, not copied once, because they register while the
 * context starts, possibly after a first task was scheduled; a queue found known stays
 * known.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class QueueDeclarations {

	private static final Log logger = LogFactory.getLog(QueueDeclarations.class);

	/** At most this many known names are listed in a message. */
	private static final int LISTED = 10;

	private final Set<String> declared;

	private final boolean declaredOnly;

	private final Function<String, Optional<HandledQueue>> handlers;

	private final Supplier<Collection<String>> handledQueues;

	private final Set<String> known = ConcurrentHashMap.newKeySet();

	private final Set<String> warned = ConcurrentHashMap.newKeySet();

	private final boolean checking;

	private QueueDeclarations(Set<String> declared, boolean declaredOnly,
			Function<String, Optional<HandledQueue>> handlers, Supplier<Collection<String>> handledQueues,
			boolean checking) {
		this.declared = new TreeSet<>(declared);
		this.declaredOnly = declaredOnly;
		this.handlers = handlers;
		this.handledQueues = handledQueues;
		this.checking = checking;
		this.known.addAll(declared);
	}

	/**
	 * Declarations that check scheduling.
	 * @param declared the declared queue names
	 * @param declaredOnly whether scheduling to an unknown queue fails (else it is warned
	 * about once)
	 * @param handlers this instance's handler of a queue, if it has one
	 * @param handledQueues the queues this instance has handlers of, for the names a
	 * message suggests
	 * @return the declarations
	 */
	public static QueueDeclarations of(Collection<String> declared, boolean declaredOnly,
			Function<String, Optional<HandledQueue>> handlers, Supplier<Collection<String>> handledQueues) {
		return new QueueDeclarations(Set.copyOf(declared), declaredOnly, handlers, handledQueues, true);
	}

	/**
	 * Declarations that accept every queue silently, for schedulers wired by hand.
	 * @return the declarations
	 */
	public static QueueDeclarations acceptAll() {
		return new QueueDeclarations(Set.of(), false, (queue) -> Optional.empty(), Set::of, false);
	}

	/**
	 * The declared queue names.
	 * @return the names, sorted
	 */
	public Set<String> declared() {
		return this.declared;
	}

	/**
	 * Check that tasks may be scheduled to {@code queue}, whose name is valid.
	 * @param queue the queue
	 * @throws InvalidTaskRequestException when the queue is unknown and only declared
	 * queues are allowed
	 */
	public void check(String queue) {
		if (!this.checking || this.known.contains(queue) || (!this.declaredOnly && this.warned.contains(queue))) {
			return;
		}
		if (this.handlers.apply(queue).isPresent()) {
			this.known.add(queue);
			return;
		}
		String hint = hint(queue);
		if (this.declaredOnly) {
			throw new InvalidTaskRequestException("Queue '" + queue + "' is not declared: it is neither under "
					+ "delayed-tasks.queues nor handled by a @DelayedTaskHandler of this application, and "
					+ "delayed-tasks.producer.declared-queues-only is true. " + hint);
		}
		if (this.warned.add(queue)) {
			logger.warn("Queue '" + queue + "' is neither declared under delayed-tasks.queues nor handled by a "
					+ "@DelayedTaskHandler of this application: its tasks wait until some instance handles it. " + hint
					+ " (This is logged once per queue; delayed-tasks.producer.declared-queues-only=true makes "
					+ "scheduling to an undeclared queue fail.)");
		}
	}

	/**
	 * Check that payloads of {@code payloadType} fit the handler of {@code queue} on this
	 * instance, if it has one: the handler's parameter type must accept them (a
	 * supertype, or a type that reads any JSON: {@code Object}, {@code JsonNode},
	 * {@code Map}).
	 * @param queue the queue
	 * @param payloadType the type of the payloads
	 * @return {@code true} when a handler was found and fits, {@code false} when this
	 * instance has no handler of the queue (yet)
	 * @throws InvalidTaskRequestException when the handler cannot take such payloads
	 */
	public boolean checkPayloadType(String queue, Class<?> payloadType) {
		Optional<HandledQueue> handled = this.handlers.apply(queue);
		if (handled.isEmpty()) {
			return false;
		}
		Type accepted = handled.get().payloadType();
		if (accepted == null) {
			throw new InvalidTaskRequestException("Queue '" + queue + "' is handled by " + handled.get().handler()
					+ ", which takes no payload, not a " + payloadType.getName());
		}
		// A handler of an int takes an Integer payload.
		Class<?> raw = ClassUtils.resolvePrimitiveIfNecessary(ResolvableType.forType(accepted).toClass());
		if (raw == Object.class || JsonNode.class.isAssignableFrom(raw) || raw == Map.class
				|| raw.isAssignableFrom(payloadType)) {
			return true;
		}
		throw new InvalidTaskRequestException("Queue '" + queue + "' is handled by " + handled.get().handler()
				+ ", which takes a " + accepted.getTypeName() + ", not a " + payloadType.getName()
				+ ": use the handler's payload type");
	}

	private String hint(String queue) {
		Set<String> names = new TreeSet<>(this.declared);
		names.addAll(this.handledQueues.get());
		String closest = closest(queue, names);
		if (closest != null) {
			return "Did you mean '" + closest + "'?";
		}
		if (names.isEmpty()) {
			return "No queue is declared: declare it under delayed-tasks.queues." + queue + ".";
		}
		String listed = names.stream().limit(LISTED).map((name) -> "'" + name + "'").collect(Collectors.joining(", "));
		return "Known queues: " + listed + ((names.size() > LISTED) ? ", ..." : "") + ".";
	}

	/**
	 * The candidate nearest to {@code name} by edit distance, if it is near enough to be
	 * a typo: at most a third of the name's length, and at least one edit, away.
	 * @param name the name
	 * @param candidates the known names
	 * @return the nearest candidate, or {@code null}
	 */
	static @Nullable String closest(String name, Collection<String> candidates) {
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		int limit = Math.max(1, name.length() / 3);
		for (String candidate : candidates) {
			int distance = distance(name.toLowerCase(), candidate.toLowerCase());
			if (distance <= limit && distance < bestDistance) {
				best = candidate;
				bestDistance = distance;
			}
		}
		return best;
	}

	/**
	 * Levenshtein distance.
	 * @param a one string
	 * @param b another
	 * @return the fewest insertions, deletions and substitutions that turn one into the
	 * other
	 */
	static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

	/**
	 * A queue that a handler of this instance takes tasks from.
	 *
	 * @param handler the handler, for messages
	 * @param payloadType the type of its payload parameter, or {@code null} when it takes
	 * only a context
	 */
	public record HandledQueue(String handler, @Nullable Type payloadType) {

	}

}
