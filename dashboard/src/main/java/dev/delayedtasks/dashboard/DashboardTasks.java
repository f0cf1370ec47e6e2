package dev.delayedtasks.dashboard;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.delayedtasks.Names;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.actuate.DelayedTasksEndpoint;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.TaskDescriptor;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.store.LeaseHolders;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.InstanceRecord;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import dev.delayedtasks.internal.store.TaskRecords;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import org.jspecify.annotations.Nullable;

/**
 * The tasks the dashboard shows: one task with its details, and a queue's scheduled,
 * ready and running tasks a page at a time, each bounded in Redis work. A running task
 * names the instance that holds its lease, read from the lease token
 * ({@link LeaseHolders}) and matched against the instances that report themselves.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public class DashboardTasks {

	private final DelayedTasksEndpoint endpoint;

	private final RedisQueueBrowser browser;

	private final RedisDeadLetters deadLetters;

	private final RedisInstanceRegistry instances;

	private final PayloadCodec codec;

	/**
	 * Create the reads.
	 * @param endpoint the endpoint whose operations read tasks
	 * @param browser pages through a queue's tasks
	 * @param deadLetters the dead letters
	 * @param instances the instances that report themselves
	 * @param codec reads payload envelopes
	 */
	public DashboardTasks(DelayedTasksEndpoint endpoint, RedisQueueBrowser browser, RedisDeadLetters deadLetters,
			RedisInstanceRegistry instances, PayloadCodec codec) {
		this.endpoint = endpoint;
		this.browser = browser;
		this.deadLetters = deadLetters;
		this.instances = instances;
		this.codec = codec;
	}

	/**
	 * One task.
	 * @param queue the queue
	 * @param taskId the task's id
	 * @return the task, or {@code null} when it neither exists nor left an outcome
	 */
	public @Nullable TaskDescriptor task(String queue, String taskId) {
		return this.endpoint.task(queue, taskId);
	}

	/**
	 * When a task was dead-lettered: the version an edit of its payload carries.
	 * @param queue the queue
	 * @param taskId the task's id
	 * @return when, or {@code null} when it is not a dead letter
	 */
	public @Nullable Instant deadAt(String queue, String taskId) {
		return this.deadLetters.deadAt(queue, TaskId.of(taskId)).orElse(null);
	}

	/**
	 * A task's payload as JSON, for users allowed to see payloads.
	 * @param queue the queue
	 * @param taskId the task's id
	 * @return the payload, or {@code null} when the task has none
	 */
	public @Nullable String payload(String queue, String taskId) {
		// Checked as every other read checks it: the name becomes part of the key read.
		String stored = this.browser.payload(Names.checkQueue(queue), TaskId.of(taskId).value());
		return (stored != null) ? this.codec.bodyJson(stored) : null;
	}

	/**
	 * What the task page shows beside the task: its headers (metadata, not the payload,
	 * so shown without {@code show-payloads}) and its last error's bounded stack trace.
	 * @param queue the queue
	 * @param taskId the task's id
	 * @return the details; empty ones when the task has no payload or error stored
	 */
	public TaskDetails details(String queue, String taskId) {
		String id = TaskId.of(taskId).value();
		TaskRecords.ErrorRecord error = TaskRecords.parse(this.browser.error(Names.checkQueue(queue), id));
		return new TaskDetails(headers(queue, taskId), (error != null) ? error.stackTrace() : "");
	}

	/**
	 * A task's headers, from its stored envelope.
	 * @param queue the queue
	 * @param taskId the task's id
	 * @return the headers by name; none when the task has no payload stored, or one that
	 * does not read
	 */
	public Map<String, String> headers(String queue, String taskId) {
		String stored = this.browser.payload(Names.checkQueue(queue), TaskId.of(taskId).value());
		if (stored == null) {
			return Map.of();
		}
		try {
			return new TreeMap<>(this.codec.read(stored).headers());
		}
		catch (RuntimeException ex) {
			// An envelope that does not read (bad data) shows no headers; the task itself
			// is still shown.
			return Map.of();
		}
	}

	/**
	 * A page of a queue's scheduled tasks, earliest first.
	 * @param queue the queue
	 * @param offset how many to pass over
	 * @param limit how many to show
	 * @return the page
	 */
	public RedisQueueBrowser.Page scheduled(String queue, long offset, int limit) {
		return this.browser.scheduled(queue, offset, limit);
	}

	/**
	 * A page of a queue's ready tasks, in the order claims take them.
	 * @param queue the queue
	 * @param offset how many to pass over
	 * @param limit how many to show
	 * @return the page
	 */
	public RedisQueueBrowser.ReadyPage ready(String queue, long offset, int limit) {
		return this.browser.ready(queue, offset, limit);
	}

	/**
	 * A page of a queue's running tasks, earliest lease deadline first, each with the
	 * instance that holds it: the page's lease tokens in one pipeline, and the instances
	 * in two calls.
	 * @param queue the queue
	 * @param offset how many to pass over
	 * @param limit how many to show
	 * @return the page
	 */
	public RunningPage running(String queue, long offset, int limit) {
		RedisQueueBrowser.Page leased = this.browser.leased(queue, offset, limit);
		List<RedisQueueBrowser.Entry> entries = leased.entries();
		List<@Nullable String> tokens = this.browser.leaseTokens(queue,
				entries.stream().map(RedisQueueBrowser.Entry::id).toList());
		Map<String, String> instanceByTag = new HashMap<>();
		if (!entries.isEmpty()) {
			for (InstanceRecord instance : this.instances.alive().instances()) {
				String tag = LeaseHolders.tagOfInstance(instance.id());
				if (tag != null) {
					instanceByTag.put(tag, instance.id());
				}
			}
		}
		List<RunningEntry> running = new ArrayList<>(entries.size());
		for (int i = 0; i < entries.size(); i++) {
			String tag = LeaseHolders.tagOfToken(tokens.get(i));
			String instance = (tag != null) ? instanceByTag.get(tag) : null;
			running.add(new RunningEntry(entries.get(i).id(), entries.get(i).at(), (instance != null) ? instance : tag,
					instance != null));
		}
		return new RunningPage(running, leased.offset(), leased.total());
	}

	/**
	 * A task's headers and last stack trace.
	 *
	 * @param headers the headers it was scheduled with, by name
	 * @param stackTrace its last error's bounded stack trace, or {@code ""}
	 */
	public record TaskDetails(Map<String, String> headers, String stackTrace) {

	}

	/**
	 * A page of running tasks.
	 *
	 * @param entries the tasks, earliest lease deadline first
	 * @param offset how many were passed over
	 * @param total how many tasks are leased
	 */
	public record RunningPage(List<RunningEntry> entries, long offset, long total) {

	}

	/**
	 * A running task and its holder.
	 *
	 * @param id the task's id
	 * @param at its lease deadline
	 * @param holder the id of the instance that holds the lease when it reports itself;
	 * else the instance's tag from the lease token (an instance that stopped reporting:
	 * the lease ends at its deadline and the task runs again), or {@code null} when the
	 * lease names none
	 * @param holderReporting whether the holder is among the instances that report
	 * themselves
	 */
	public record RunningEntry(String id, Instant at, @Nullable String holder, boolean holderReporting) {

	}

}
