package dev.delayedtasks.dashboard;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.actuate.DelayedTasksEndpoint;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.DeadLetterDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.QueueDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.QueuesDescriptor;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.store.DeadLetterListing;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import dev.delayedtasks.internal.store.RedisQueueHistory;
import dev.delayedtasks.internal.store.RedisQueueHistory.Period;
import org.jspecify.annotations.Nullable;

/**
 * The queues the dashboard shows (the overview, one queue's counts and dead letters, its
 * charts), read through the {@code delayedtasks} endpoint's operations, the queue browser
 * and the history, each bounded in Redis work; {@link DashboardTasks} reads the tasks.
 * The queue overview is kept for the refresh interval, so any number of open pages read
 * it once per interval.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public class DashboardReads {

	/**
	 * How many of a queue's newest dead letters are grouped by reason and exception.
	 */
	static final int DEAD_LETTERS_GROUPED = 200;

	/**
	 * How many of the newest dead letters a queue's page lists.
	 */
	static final int DEAD_LETTERS_SHOWN = 20;

	/**
	 * The span of the overview's throughput per minute.
	 */
	static final Duration THROUGHPUT_SPAN = Duration.ofMinutes(5);

	private static final List<Duration> DUE_HORIZONS = List.of(Duration.ofMinutes(1), Duration.ofHours(1),
			Duration.ofDays(1));

	private final DelayedTasksEndpoint endpoint;

	private final RedisQueueBrowser browser;

	private final RedisDeadLetters deadLetters;

	private final RedisQueueHistory history;

	private final Duration refreshInterval;

	private final Clock clock;

	private final AtomicReference<@Nullable Overview> overview = new AtomicReference<>();

	/**
	 * Create the reads.
	 * @param endpoint the endpoint whose operations read queues
	 * @param browser counts the load due next
	 * @param deadLetters the dead letters
	 * @param history the queues' counters over time
	 * @param refreshInterval how long the overview is kept
	 * @param clock the clock of the due-time horizons and of the overview's age
	 */
	public DashboardReads(DelayedTasksEndpoint endpoint, RedisQueueBrowser browser, RedisDeadLetters deadLetters,
			RedisQueueHistory history, Duration refreshInterval, Clock clock) {
		this.endpoint = endpoint;
		this.browser = browser;
		this.deadLetters = deadLetters;
		this.history = history;
		this.refreshInterval = refreshInterval;
		this.clock = clock;
	}

	/**
	 * Every reported queue with its counts and the load due next, at most
	 * refresh-interval old.
	 * @return the overview
	 */
	public Overview overview() {
		Overview cached = fresh(this.overview.get());
		if (cached != null) {
			return cached;
		}
		// One reader refreshes; the others wait for it and take its copy.
		synchronized (this.overview) {
			cached = fresh(this.overview.get());
			return (cached != null) ? cached : readOverview();
		}
	}

	private @Nullable Overview fresh(@Nullable Overview cached) {
		return (cached != null && cached.readAt().plus(this.refreshInterval).isAfter(this.clock.instant())) ? cached
				: null;
	}

	private Overview readOverview() {
		Instant now = this.clock.instant();
		QueuesDescriptor queues = this.endpoint.queues();
		List<QueueView> views = queues.queues()
			.stream()
			.map((queue) -> new QueueView(queue, dueNext(queue.name(), now), throughput(queue.name(), now)))
			.toList();
		Overview fresh = new Overview(views, queues.knownQueues(), queues.unreportedQueues(), now);
		this.overview.set(fresh);
		return fresh;
	}

	/**
	 * One queue: counts, the load due next, its newest dead letters and their groups.
	 * @param queue the queue
	 * @return the queue, or {@code null} when unknown
	 */
	public @Nullable QueueDetail queue(String queue) {
		QueueDescriptor summary = this.endpoint.queueSummary(queue);
		if (summary == null) {
			return null;
		}
		DeadLetterListing newest = (summary.dead() > 0) ? this.deadLetters.listing(queue, DEAD_LETTERS_GROUPED)
				: new DeadLetterListing(List.of(), 0);
		List<DeadLetterDescriptor> shown = newest.letters()
			.stream()
			.limit(DEAD_LETTERS_SHOWN)
			.map((letter) -> new DeadLetterDescriptor(letter.id().value(), letter.reason(), letter.exceptionType(),
					letter.message(), letter.attempts(), letter.deadAt(), letter.stackTrace()))
			.toList();
		Instant now = this.clock.instant();
		return new QueueDetail(new QueueView(summary, dueNext(queue, now), throughput(queue, now)), shown,
				groups(newest.letters()), newest.letters().size(), newest.unreadable());
	}

	/**
	 * Whether a queue is known (handled here or in the index), in one {@code SISMEMBER}.
	 * @param queue the queue
	 * @return whether it is known
	 */
	public boolean knows(String queue) {
		return this.endpoint.knows(queue);
	}

	/**
	 * Forget the kept overview, so that the next read shows an action's effect.
	 */
	void forgetOverview() {
		this.overview.set(null);
	}

	/**
	 * A queue's created, succeeded and failed tasks over time, from the history every
	 * instance with handlers records in Redis: per minute over the last hour, per hour
	 * over the last day and the last month.
	 * @param queue the queue
	 * @return the charts' data, or {@code null} when the queue is unknown
	 */
	public @Nullable Charts charts(String queue) {
		if (!knows(queue)) {
			return null;
		}
		Instant now = this.clock.instant();
		return new Charts(this.history.perMinute(queue, Duration.ofHours(1), now),
				this.history.perHour(queue, Duration.ofDays(1), now),
				this.history.perHour(queue, Duration.ofDays(31), now));
	}

	private Throughput throughput(String queue, Instant now) {
		RedisQueueHistory.Recent recent = this.history.recent(queue, THROUGHPUT_SPAN, now);
		List<Period> minutes = recent.perMinute();
		double span = THROUGHPUT_SPAN.toMinutes();
		RedisQueueHistory.Lateness lateness = recent.lateness();
		return new Throughput(minutes.stream().mapToDouble(Period::created).sum() / span,
				minutes.stream().mapToDouble(Period::succeeded).sum() / span,
				minutes.stream().mapToDouble(Period::failed).sum() / span, lateness.p50Millis(), lateness.p99Millis());
	}

	private DueNext dueNext(String queue, Instant now) {
		List<Long> counts = this.browser.dueWithin(queue, now, DUE_HORIZONS.stream().map(now::plus).toList());
		return new DueNext(counts.get(0), counts.get(1), counts.get(2));
	}

	private static List<DeadLetterGroup> groups(List<DeadLetter> letters) {
		Map<List<String>, DeadLetterGroup> groups = new LinkedHashMap<>();
		for (DeadLetter letter : letters) {
			groups.merge(List.of(letter.reason(), letter.exceptionType()),
					new DeadLetterGroup(letter.reason(), letter.exceptionType(), 1, letter.deadAt(), letter.message()),
					(group, one) -> new DeadLetterGroup(group.reason(), group.exceptionType(), group.count() + 1,
							group.newestAt(), group.example()));
		}
		return groups.values().stream().sorted(Comparator.comparingLong(DeadLetterGroup::count).reversed()).toList();
	}

	/**
	 * The queues.
	 *
	 * @param queues the reported queues
	 * @param knownQueues the known queues
	 * @param unreportedQueues the known queues left out
	 * @param readAt when they were read
	 */
	public record Overview(List<QueueView> queues, int knownQueues, int unreportedQueues, Instant readAt) {

	}

	/**
	 * A queue and the load due next.
	 *
	 * @param queue the queue as the endpoint describes it
	 * @param dueNext scheduled tasks falling due soon
	 * @param throughput tasks per minute over the last five minutes
	 */
	public record QueueView(QueueDescriptor queue, DueNext dueNext, Throughput throughput) {

	}

	/**
	 * Tasks per minute and the lateness of the runs started, from the history in Redis.
	 *
	 * @param created tasks created per minute
	 * @param succeeded runs that succeeded per minute
	 * @param failed runs that failed per minute (retried or dead-lettered)
	 * @param latenessP50Millis the median lateness of the runs started, to its bucket's
	 * bound (above 60,000: more than a minute), or {@code null} when none started
	 * @param latenessP99Millis the 99th percentile, the same way
	 */
	public record Throughput(double created, double succeeded, double failed, @Nullable Long latenessP50Millis,
			@Nullable Long latenessP99Millis) {

	}

	/**
	 * A queue's counts over time.
	 *
	 * @param lastHour per minute
	 * @param lastDay per hour
	 * @param lastMonth per hour
	 */
	public record Charts(List<Period> lastHour, List<Period> lastDay, List<Period> lastMonth) {

	}

	/**
	 * Scheduled tasks falling due within the next minute, hour and day.
	 *
	 * @param minute within a minute
	 * @param hour within an hour
	 * @param day within a day
	 */
	public record DueNext(long minute, long hour, long day) {

	}

	/**
	 * One queue in detail.
	 *
	 * @param view the queue and its load due next
	 * @param deadLetters its newest dead letters
	 * @param deadLetterGroups the newest dead letters grouped by reason and exception
	 * type, largest group first
	 * @param groupedOver how many dead letters the groups count (the newest ones)
	 * @param unreadableDeadLetters dead-set members that are not task ids
	 */
	public record QueueDetail(QueueView view, List<DeadLetterDescriptor> deadLetters,
			List<DeadLetterGroup> deadLetterGroups, int groupedOver, int unreadableDeadLetters) {

	}

	/**
	 * Dead letters with one reason and exception type.
	 *
	 * @param reason why they were dead-lettered
	 * @param exceptionType the exception's class name
	 * @param count how many
	 * @param newestAt when the newest was dead-lettered
	 * @param example the newest one's message
	 */
	public record DeadLetterGroup(String reason, String exceptionType, long count, Instant newestAt, String example) {

	}

}
