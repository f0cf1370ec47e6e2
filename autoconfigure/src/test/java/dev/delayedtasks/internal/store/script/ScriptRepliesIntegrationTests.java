package dev.delayedtasks.internal.store.script;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.producer.RedisDelayedTaskScheduler;
import dev.delayedtasks.internal.recurring.RecurringEvents;
import dev.delayedtasks.internal.recurring.RedisRecurringTasks;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.RedisQueueHistory;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.tracking.OutcomeRecords;
import dev.delayedtasks.internal.worker.OccurrenceGate;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Every script, called the way the library calls it (through the task store, the
 * scheduler, the dead letters and the queue stats) on a real Redis: the keys of each call
 * are the ones its header declares, in their order, and each reply has the shape its
 * header's {@code Reply:} entry documents ({@link ReplyShape}), in the branches the calls
 * reach. The replies are the scripts' own, so the documentation cannot drift from them
 * unnoticed.
 */
@WithRedis
class ScriptRepliesIntegrationTests {

	private static final Pattern BASE_ARGUMENT = Pattern.compile("^-- ARGV: 1 base\\b");

	private static final String QUEUE = "replies";

	private static final String OTHER = "replies-other";

	private static final String OLD_LAYOUT = "replies-layout";

	private static final String REMOVED = "replies-removed";

	private StoreFixture fixture;

	private RecordingTemplate recording;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis,
				StoreFixture.settings(redis.keyPrefix(), StoreFixture.LEASE, StoreFixture.GRACE), (factory) -> {
					this.recording = new RecordingTemplate(factory);
					return this.recording;
				});
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void everyCallPassesTheKeysItsHeaderDeclaresAndGetsTheReplyItsHeaderDocuments() {
		RedisDelayedTaskScheduler scheduler = this.fixture.scheduler;
		RedisTaskStore store = this.fixture.store;
		RedisDeadLetters deadLetters = this.fixture.deadLetters;

		// enqueue: created, existing, unique, duplicate; a batch over two queues
		scheduler.submit(TaskRequest.of(QUEUE, "given").id("given"));
		scheduler.submit(TaskRequest.of(QUEUE, "given").id("given"));
		TaskRequest unique = TaskRequest.of(QUEUE, "unique").uniqueKey("k").uniqueFor(Duration.ofHours(1));
		scheduler.submit(unique);
		scheduler.submit(unique);
		scheduler.scheduleAll(List.of(TaskRequest.of(QUEUE, 1), TaskRequest.of(OTHER, 2),
				TaskRequest.of(QUEUE, 3).delay(Duration.ofHours(1))));
		// claim: three ready tasks, then none
		List<ClaimedTask> claimed = store.claim(QUEUE, 10, "n1").tasks();
		assertThat(claimed).hasSize(3);
		store.claim(QUEUE, 10, "n2");
		Lease done = claimed.get(0).lease();
		Lease retried = claimed.get(1).lease();
		Lease dead = claimed.get(2).lease();
		// extend: extended, lost
		store.extend(QUEUE, List.of(done, new Lease(done.id(), "n0:0", null)));
		// ack: done, stale, gone
		store.ack(QUEUE, List.of(done, new Lease(retried.id(), "n0:0", null),
				new Lease(TaskId.of("never-existed"), "n0:0", null)));
		// fail: a retry later, a dead letter
		store.fail(QUEUE, retried, new TaskFailure(Duration.ofHours(1), FailureReason.NON_RETRYABLE, "E", "retry"));
		store.fail(QUEUE, dead, new TaskFailure(null, FailureReason.NON_RETRYABLE, "E", "fatal"));
		// track: a live task, then the same task once its outcome is recorded, a missing
		// one
		OutcomeRecords outcomes = new OutcomeRecords(this.fixture.scripts, this.fixture.settings, this.fixture.codec);
		TaskId tracked = scheduler.enqueue(QUEUE, "tracked");
		String channel = this.fixture.settings.keyPrefix() + ":tracker:replies";
		outcomes.track(QUEUE, tracked, Duration.ofMinutes(1), channel);
		store.ack(QUEUE, List.of(store.claim(QUEUE, 1, "n6").tasks().get(0).lease()));
		outcomes.track(QUEUE, tracked, Duration.ofMinutes(1), channel);
		outcomes.track(QUEUE, TaskId.of("missing"), Duration.ofMinutes(1), channel);
		// release: released, lost
		scheduler.enqueue(QUEUE, "released");
		Lease released = store.claim(QUEUE, 1, "n3").tasks().get(0).lease();
		store.release(QUEUE, List.of(released, new Lease(released.id(), "n0:0", null)));
		// recover: a claim whose reply never arrived
		store.claim(QUEUE, 1, "n4");
		store.recover(QUEUE, List.of("n4"));
		// promote: the timer taken, held by another, resigned
		store.promote(QUEUE, "owner-1", Duration.ofSeconds(30));
		store.promote(QUEUE, "owner-2", Duration.ofSeconds(30));
		store.resignTimer(QUEUE, "owner-1");
		// reschedule and cancel: done, and not found
		TaskId later = scheduler.schedule(QUEUE, "later", Duration.ofHours(1));
		scheduler.reschedule(QUEUE, later, Duration.ofHours(2));
		scheduler.reschedule(QUEUE, TaskId.of("missing"), Duration.ofHours(2));
		scheduler.cancel(QUEUE, later);
		scheduler.cancel(QUEUE, TaskId.of("missing"));
		// redrive: one id, an id that is not dead, all
		deadLetters.redrive(QUEUE, dead.id());
		deadLetters.redrive(QUEUE, TaskId.of("missing"));
		deadLetters.redriveAll(QUEUE);
		// purge and trim of a dead letter
		Lease again = store.claim(QUEUE, 1, "n5").tasks().get(0).lease();
		store.fail(QUEUE, again, new TaskFailure(null, FailureReason.NON_RETRYABLE, "E", "fatal again"));
		deadLetters.trim(QUEUE);
		deadLetters.purge(QUEUE);
		// stats
		new RedisQueueStats(this.fixture.scripts, this.fixture.settings).read(QUEUE);
		// history: recorded, then already recorded this minute
		RedisQueueHistory history = new RedisQueueHistory(this.fixture.scripts, this.fixture.settings);
		history.record(QUEUE);
		history.record(QUEUE);
		// remove: refused while the queue holds tasks, done once it is empty; the next
		// enqueue finds the partition fresh
		this.fixture.control.remove(QUEUE);
		TaskId removedTask = scheduler.enqueue(REMOVED, "once");
		scheduler.cancel(REMOVED, removedTask);
		this.fixture.control.remove(REMOVED);
		scheduler.enqueue(REMOVED, "again");
		// enqueue on a queue that another layout version wrote
		this.fixture.redis.opsForHash().put(this.fixture.keys(OLD_LAYOUT).meta(), "v", "0");
		assertThat(catchThrowable(() -> scheduler.enqueue(OLD_LAYOUT, "refused"))).isNotNull();
		// recurring: created, same, updated; advanced and started; triggered; paused,
		// trigger refused, resumed, removed
		recurringCalls();

		List<Call> calls = this.recording.calls;
		assertThat(calls.stream().map(Call::script).collect(Collectors.toSet())).as("scripts called")
			.containsAll(EnumSet.allOf(Script.class));
		SoftAssertions softly = new SoftAssertions();
		for (Call call : calls) {
			checkKeys(call, keysOf(call));
			ReplyShape shape = ReplyShape.parse(LuaFile.load(call.script()).reply());
			softly.assertThat(shape.mismatches(call.reply(), items(call)))
				.as("reply %s of %s to %s, against its header's %s", call.reply(), call.script().fileName(),
						call.args(), shape)
				.isEmpty();
		}
		softly.assertAll();
		// The calls reached the branches the comments above name.
		assertThat(codes(calls, Script.ENQUEUE)).contains("C", "E", "U", "LAYOUT");
		assertThat(codes(calls, Script.EXTEND)).contains("O", "L");
		assertThat(codes(calls, Script.ACK)).contains("O", "S", "G");
		assertThat(codes(calls, Script.FAIL)).contains("T", "D");
		assertThat(codes(calls, Script.RELEASE)).contains("O").containsAnyOf("L", "G");
		assertThat(codes(calls, Script.RESCHEDULE)).contains("O", "N");
		assertThat(codes(calls, Script.CANCEL)).contains("C", "N");
		assertThat(codes(calls, Script.REMOVE)).contains("N", "O");
		assertThat(codes(calls, Script.TRACK)).contains("L", "O", "N");
		assertThat(replies(calls, Script.ENQUEUE)).extracting((reply) -> reply.get(1)).contains(0L, 1L);
		assertThat(replies(calls, Script.CLAIM)).extracting(List::size).contains(8, 8 + 3 * 9);
		assertThat(codes(calls, Script.RECUR_UPSERT)).contains("C", "S", "U");
		assertThat(codes(calls, Script.RECUR_ADVANCE)).contains("O", "R", "P");
		assertThat(codes(calls, Script.RECUR_CONTROL)).contains("O", "N");
		assertThat(codes(calls, Script.RECUR_TRIGGER)).contains("O", "P");
		assertThat(replies(calls, Script.PROMOTE)).extracting((reply) -> reply.subList(1, 3))
			.contains(List.of(1L, 30_000L), List.of(0L, -2L));
	}

	private void recurringCalls() {
		RedisRecurringTasks recurring = new RedisRecurringTasks(this.fixture.scripts, this.fixture.settings,
				this.fixture.codec, this.fixture.queues, this.fixture.redis, (queue) -> 4, RecurringEvents.NONE,
				Clock.systemUTC());
		recurring.upsert(RecurringSchedule.fixedRate("every-minute", QUEUE, Duration.ofMinutes(1)));
		recurring.upsert(RecurringSchedule.fixedRate("every-minute", QUEUE, Duration.ofMinutes(1)));
		recurring.upsert(RecurringSchedule.fixedRate("every-minute", QUEUE, Duration.ofMinutes(2)));
		Instant tick = recurring.find("every-minute").orElseThrow().nextTick();
		TaskContext occurrence = new TaskContext(TaskId.of("every-minute:" + tick.toEpochMilli()), QUEUE, 1, 1, tick,
				tick, tick, Map.of(OccurrenceGate.HEADER, "every-minute"), "token");
		assertThat(recurring.admit(occurrence)).isTrue();
		recurring.finished(occurrence, null);
		assertThat(recurring.trigger("every-minute")).isPresent();
		recurring.pause("every-minute");
		recurring.ensure("every-minute");
		assertThatIllegalStateException().isThrownBy(() -> recurring.trigger("every-minute"));
		recurring.resume("every-minute");
		recurring.remove("every-minute");
		// an occurrence that ends after its schedule was removed
		recurring.finished(occurrence, null);
	}

	/** The partition whose base starts the call's first key. */
	private PartitionKeys keysOf(Call call) {
		return List.of(QUEUE, OTHER, OLD_LAYOUT, REMOVED)
			.stream()
			.map(this.fixture::keys)
			.filter((keys) -> call.keys().get(0).startsWith(keys.base()))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No queue of this test has the keys " + call.keys()));
	}

	/** The items a call sent, for a script with keys per item. */
	private static int items(Call call) {
		Script script = call.script();
		return (script.keysPerItem() > 0) ? (call.keys().size() - script.fixedKeys()) / script.keysPerItem() : -1;
	}

	private static void checkKeys(Call call, PartitionKeys keys) {
		Script script = call.script();
		String where = script.fileName() + " called with " + call.keys();
		assertThat(script.acceptsKeyCount(call.keys().size())).as(where).isTrue();
		for (String key : call.keys()) {
			assertThat(key).as("key of one partition in %s", where).startsWith(keys.base());
		}
		LuaFile file = LuaFile.load(script);
		if (file.header.stream().anyMatch((line) -> BASE_ARGUMENT.matcher(line).find())) {
			assertThat(call.args().get(0)).as("ARGV[1] (base) of %s", where).isEqualTo(keys.base());
		}
		List<String> fixed = file.fixedKeyNames();
		List<String> perItem = file.perItemKeyNames();
		for (int i = 0; i < call.keys().size(); i++) {
			String expected = (i < script.fixedKeys()) ? fixed.get(i)
					: perItem.get((i - script.fixedKeys()) % script.keysPerItem());
			assertThat(shape(call.keys().get(i).substring(keys.base().length())))
				.as("key %d of %s (header says %s)", i + 1, where, expected)
				.isEqualTo(shape(expected));
		}
	}

	/**
	 * The shape of a key suffix: {@code t:abc} and the header's {@code t:<id>} are both
	 * {@code t:*}.
	 */
	private static String shape(String suffix) {
		int colon = suffix.indexOf(':');
		return (colon < 0) ? suffix : suffix.substring(0, colon) + ":*";
	}

	private static List<List<Object>> replies(List<Call> calls, Script script) {
		return calls.stream().filter((call) -> call.script() == script).map(Call::reply).toList();
	}

	/** The text elements of a script's replies: its codes, and ids. */
	private static Set<Object> codes(List<Call> calls, Script script) {
		return replies(calls, script).stream()
			.flatMap(List::stream)
			.filter(String.class::isInstance)
			.collect(Collectors.toSet());
	}

	/** One script call and Redis's reply. */
	record Call(Script script, List<String> keys, List<String> args, List<Object> reply) {
	}

	/**
	 * A template that records the script calls the store makes on it, with their replies
	 * as the store receives them.
	 */
	static final class RecordingTemplate extends ScriptCallRecordingTemplate {

		final List<Call> calls = new CopyOnWriteArrayList<>();

		private final Map<String, Script> scriptsBySha;

		RecordingTemplate(RedisConnectionFactory connectionFactory) {
			super(connectionFactory);
			this.scriptsBySha = Arrays.stream(Script.values())
				.collect(Collectors.toMap((script) -> RedisScript.of(StoreScripts.source(script)).getSha1(),
						Function.identity()));
		}

		@Override
		void onScriptReply(String sha, List<String> keys, List<String> args, List<Object> reply) {
			Script called = this.scriptsBySha.get(sha);
			if (called != null) {
				this.calls.add(new Call(called, List.copyOf(keys), List.copyOf(args), new ArrayList<>(reply)));
			}
		}

	}

}
