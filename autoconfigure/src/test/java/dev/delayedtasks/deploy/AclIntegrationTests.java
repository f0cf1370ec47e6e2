package dev.delayedtasks.deploy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The library works as a Redis user with exactly the documented ACL line, and a user that
 * lacks one of its permissions fails with a message that says so. The users are created
 * on a private server from the line in docs/deployment.md.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class AclIntegrationTests {

	private static final String QUEUE = "acl";

	private static final String PASSWORD = "acl-test-password";

	private final TestRedis redis;

	private final RedisClient adminClient;

	private StatefulRedisConnection<String, String> admin;

	AclIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.adminClient = RedisClient.create(redis.uri());
	}

	@BeforeEach
	void connectAsAdmin() {
		this.admin = this.adminClient.connect();
		this.admin.sync().aclLogReset();
	}

	@AfterEach
	void disconnect() {
		this.admin.close();
		this.adminClient.shutdown();
	}

	@Test
	void theReadmeAclLetsTheLibraryDoEverythingAndRedisRefusesNothing(CapturedOutput output) {
		createUser("delayed-tasks", readmeRules(this.redis.keyPrefix()));
		runnerAs("delayed-tasks").withUserConfiguration(Handlers.class).run(AclIntegrationTests::doEverything);
		// Also what the library shrugs off (a denied INFO, a failed BLPOP it retries)
		// would show here.
		assertThat(aclLogBeyondTheHandshake()).isEmpty();
		assertThat(output).doesNotContain("Could not read Redis's maxmemory-policy");
	}

	/**
	 * Schedule, run, heartbeat, retry, dead-letter, redrive, purge, cancel, reschedule,
	 * pause and read counts: every script and every plain command the library sends.
	 * @param context a context with {@link Handlers}
	 */
	static void doEverything(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed();
		Handlers handlers = context.getBean(Handlers.class);
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		DeadLetters deadLetters = context.getBean(DeadLetters.class);
		TaskId delayed = scheduler.schedule(QUEUE, new Job("ok"), Duration.ofMillis(200));
		TaskId slow = scheduler.enqueue(QUEUE, new Job("slow"));
		TaskId flaky = scheduler.enqueue(QUEUE, new Job("flaky"));
		TaskId bad = scheduler.enqueue(QUEUE, new Job("bad"));
		TaskId later = scheduler.schedule(QUEUE, new Job("ok"), Duration.ofHours(1));
		assertThat(scheduler.find(QUEUE, later))
			.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(TaskState.SCHEDULED));
		assertThat(scheduler.reschedule(QUEUE, later, Duration.ofHours(2))).isTrue();
		assertThat(scheduler.cancel(QUEUE, later)).isTrue();
		// The non-blocking path, on the reactive connection, with the same grants.
		TaskId laterAsync = scheduler.scheduleAsync(QUEUE, new Job("ok"), Duration.ofHours(1)).join();
		assertThat(scheduler.findAsync(QUEUE, laterAsync).join()).isPresent();
		assertThat(scheduler.rescheduleAsync(QUEUE, laterAsync, Duration.ofHours(2)).join()).isTrue();
		assertThat(scheduler.cancelAsync(QUEUE, laterAsync).join()).isTrue();
		// Tracking: the ending script publishes on the tracker's channel, which it
		// subscribed to; awaitOutcome names it on a live task.
		TrackedTask tracked = scheduler.track(TaskRequest.of(QUEUE, new Job("ok")));
		assertThat(tracked.await(Duration.ofSeconds(15)))
			.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(TaskOutcome.Kind.SUCCEEDED));
		TaskId awaited = scheduler.schedule(QUEUE, new Job("ok"), Duration.ofMillis(300));
		assertThat(scheduler.awaitOutcome(QUEUE, awaited, Duration.ofSeconds(15))).isPresent();
		await().atMost(Duration.ofSeconds(15))
			.until(() -> handlers.done.containsAll(List.of(delayed, slow, flaky)) && deadLetters.count(QUEUE) == 1);
		assertThat(handlers.flakyRuns).hasValue(2);
		assertThat(deadLetters.list(QUEUE, 10)).extracting(DeadLetter::id).containsExactly(bad);
		assertThat(context.getBean(RedisQueueStats.class).read(QUEUE).dead()).isEqualTo(1);
		assertThat(deadLetters.redrive(QUEUE, bad)).isTrue();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> handlers.badRuns.get() == 2 && deadLetters.count(QUEUE) == 1);
		assertThat(deadLetters.purge(QUEUE)).isEqualTo(1);
		QueueControl control = context.getBean(QueueControl.class);
		control.pause(QUEUE);
		assertThat(control.isPaused(QUEUE)).isTrue();
		control.resume(QUEUE);
		TaskId afterResume = scheduler.enqueue(QUEUE, new Job("ok"));
		await().atMost(Duration.ofSeconds(10)).until(() -> handlers.done.contains(afterResume));
		// Removing a queue: refused for the handled one, done for an emptied one,
		// which the next schedule adds to the index again.
		assertThat(control.remove(QUEUE).outcome()).isEqualTo(QueueRemoval.Outcome.HANDLED_HERE);
		String unhandled = "acl-unhandled";
		TaskId once = scheduler.enqueue(unhandled, new Job("ok"));
		assertThat(control.remove(unhandled).outcome()).isEqualTo(QueueRemoval.Outcome.NOT_EMPTY);
		assertThat(scheduler.cancel(unhandled, once)).isTrue();
		assertThat(control.remove(unhandled).removed()).isTrue();
		scheduler.enqueue(unhandled, new Job("ok"));
		assertThat(context.getBean(QueueIndex.class).contains(unhandled)).isTrue();
	}

	@Test
	void theReadmeAclGrantsTheMemorySectionOfInfoButNotTheServerSection() {
		createUser("delayed-tasks", readmeRules(this.redis.keyPrefix()));
		try (UserConnection user = connectAs("delayed-tasks")) {
			assertThat(user.info("memory")).contains("maxmemory_policy:");
			assertThatExceptionOfType(RedisCommandExecutionException.class).isThrownBy(() -> user.info("server"))
				.withMessageContaining("NOPERM");
			assertThatExceptionOfType(RedisCommandExecutionException.class).isThrownBy(() -> user.info())
				.withMessageContaining("NOPERM");
			if (this.redis.version().startsWith("6.")) {
				// INFO takes one section on 6.2: the first argument is all there is.
				assertThatExceptionOfType(RedisCommandExecutionException.class)
					.isThrownBy(() -> user.info("memory", "server"))
					.withMessageContaining("syntax error");
			}
			else {
				// Redis 7 takes several sections, and a first-argument rule checks only
				// the first: the limit the README states.
				assertThat(user.info("memory", "server")).contains("executable:").contains("process_id:");
			}
		}
	}

	@Test
	void withTheEvalLineAnyoneHoldingTheCredentialsCanBlockRedisWithALoopingScript() {
		createUser("delayed-tasks", readmeRules(this.redis.keyPrefix()));
		this.admin.sync().configSet("lua-time-limit", "100");
		try (UserConnection attacker = connectAs("delayed-tasks")) {
			RedisFuture<Object> loop = attacker.connection.async().eval("while true do end", ScriptOutputType.STATUS);
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThatExceptionOfType(RedisBusyException.class)
					.isThrownBy(() -> this.admin.sync().ping())
					.withMessageContaining("BUSY"));
			assertThat(this.admin.sync().scriptKill()).isEqualTo("OK");
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> loop.get(10, TimeUnit.SECONDS))
				.withMessageContaining("killed");
		}
		finally {
			this.admin.sync().configSet("lua-time-limit", "5000");
		}
	}

	@Test
	void aUserConfinedToAnotherKeyPrefixStopsStartupNamingTheFix() {
		createUser("elsewhere", readmeRules("elsewhere"));
		runnerAs("elsewhere").withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(DelayedTaskException.class)
				.hasMessageContaining("key prefix '" + this.redis.keyPrefix() + "'")
				.hasMessageContaining("NOPERM")
				.hasMessageContaining("docs/deployment.md, ACL");
		});
	}

	@Test
	void theDocumentedKeyPatternsGrantThisPrefixOnlyNotOneThatMerelyStartsWithIt() {
		createUser("delayed-tasks", readmeRules(this.redis.keyPrefix()));
		String prefix = this.redis.keyPrefix();
		RedisClient client = RedisClient
			.create(RedisURI.builder(this.redis.uri()).withAuthentication("delayed-tasks", PASSWORD).build());
		try (StatefulRedisConnection<String, String> user = client.connect()) {
			assertThat(user.sync().set(prefix + ":{q:0}:t:1", "x")).isEqualTo("OK");
			assertThat(user.sync().sadd(prefix + ":queues", "q")).isEqualTo(1L);
			assertThat(user.sync().zadd(prefix + ":recurring", 1, "s")).isEqualTo(1L);
			for (String other : List.of(prefix + ":billing:{q:0}:t:1", prefix + ":billing:queues",
					prefix + "x:{q:0}:t:1")) {
				assertThatExceptionOfType(RedisCommandExecutionException.class)
					.isThrownBy(() -> user.sync().set(other, "x"))
					.withMessageContaining("NOPERM");
			}
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aUserWithoutEvalshaCannotScheduleAndIsToldWhichPermission() {
		createUser("no-evalsha", without(readmeRules(this.redis.keyPrefix()), "+evalsha"));
		runnerAs("no-evalsha").withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThatExceptionOfType(TaskStoreException.class)
				.isThrownBy(() -> context.getBean(DelayedTaskScheduler.class).enqueue(QUEUE, new Job("ok")))
				.withMessageContaining("enqueue.lua")
				.withMessageContaining("NOPERM")
				.withMessageContaining("'evalsha'")
				.withMessageContaining("docs/deployment.md, ACL");
		});
	}

	@Test
	void aUserWithoutACommandOnlyAScriptCallsCannotScheduleAndIsToldSo() {
		createUser("no-time", without(readmeRules(this.redis.keyPrefix()), "+time"));
		runnerAs("no-time").withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThatExceptionOfType(TaskStoreException.class)
				.isThrownBy(() -> context.getBean(DelayedTaskScheduler.class).enqueue(QUEUE, new Job("ok")))
				.withMessageContaining("enqueue.lua")
				.withMessageContaining("can't run this command")
				.withMessageContaining("docs/deployment.md, ACL");
		});
		assertThat(aclLog()).anySatisfy((entry) -> assertThat(entry).containsEntry("object", "time"));
	}

	@Test
	void aUrlWithoutTheConfiguredUserConnectsAsTheDefaultUserAndTheStartupSaysSo(CapturedOutput output) {
		createUser("delayed-tasks", readmeRules(this.redis.keyPrefix()));
		runnerAs("delayed-tasks")
			.withPropertyValues("delayed-tasks.worker.enabled=false",
					"spring.data.redis.url=redis://" + this.redis.host() + ":" + this.redis.port())
			.run((context) -> {
				assertThat(context).hasNotFailed();
				byte[] whoami = context.getBean(StringRedisTemplate.class)
					.execute((RedisCallback<byte[]>) (connection) -> (byte[]) connection.execute("ACL",
							"WHOAMI".getBytes(StandardCharsets.UTF_8)));
				assertThat(new String(whoami, StandardCharsets.UTF_8)).isEqualTo("default");
				assertThat(output).contains("spring.data.redis.username is 'delayed-tasks', but spring.data.redis.url")
					.contains("connects to Redis as the default user");
			});
		runnerAs("delayed-tasks")
			.withPropertyValues("delayed-tasks.worker.enabled=false",
					"spring.data.redis.url=redis://delayed-tasks:" + PASSWORD + "@" + this.redis.host() + ":"
							+ this.redis.port())
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output.toString().split("spring.data.redis.username is", -1)).hasSize(2);
	}

	private ApplicationContextRunner runnerAs(String user) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
					"spring.data.redis.port=" + this.redis.port(), "spring.data.redis.username=" + user,
					"spring.data.redis.password=" + PASSWORD, "delayed-tasks.key-prefix=" + this.redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.retry.delay=100ms");
	}

	private static List<String> readmeRules(String keyPrefix) {
		return ReadmeAcl.read().rules(keyPrefix, PASSWORD);
	}

	private static List<String> without(List<String> rules, String rule) {
		assertThat(rules).contains(rule);
		List<String> fewer = new ArrayList<>(rules);
		fewer.remove(rule);
		return fewer;
	}

	private void createUser(String name, List<String> rules) {
		CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8).add("SETUSER").add(name).add("reset");
		rules.forEach(args::add);
		String reply = this.admin.sync().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), args);
		assertThat(reply).isEqualTo("OK");
	}

	private UserConnection connectAs(String user) {
		return UserConnection.open(this.redis, user, PASSWORD);
	}

	private List<Map<String, Object>> aclLog() {
		return this.admin.sync().aclLog();
	}

	/**
	 * The ACL log without Lettuce's connection metadata ({@code CLIENT SETINFO},
	 * {@code CLIENT MAINT_NOTIFICATIONS}), which it sends on connect and whose failure it
	 * ignores: Redis 6.2 refuses them by ACL, Redis 7.0 does not know them.
	 */
	private List<Map<String, Object>> aclLogBeyondTheHandshake() {
		return aclLog().stream().filter((entry) -> !"client".equals(entry.get("object"))).toList();
	}

	record Job(String kind) {
	}

	/**
	 * A connection of a user the test created, as someone holding the user's credentials
	 * would open one.
	 */
	record UserConnection(RedisClient client,
			StatefulRedisConnection<String, String> connection) implements AutoCloseable {

		static UserConnection open(TestRedis redis, String user, String password) {
			RedisClient client = RedisClient
				.create(RedisURI.builder(redis.uri()).withAuthentication(user, password.toCharArray()).build());
			return new UserConnection(client, client.connect());
		}

		String info(String... sections) {
			CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8);
			for (String section : sections) {
				args.add(section);
			}
			return this.connection.sync().dispatch(CommandType.INFO, new StatusOutput<>(StringCodec.UTF8), args);
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		final Set<TaskId> done = ConcurrentHashMap.newKeySet();

		final AtomicInteger flakyRuns = new AtomicInteger();

		final AtomicInteger badRuns = new AtomicInteger();

		@DelayedTaskHandler(queue = QUEUE, concurrency = "4")
		void run(Job job, TaskContext context) throws InterruptedException {
			switch (job.kind()) {
				// Longer than a third of the lease: the heartbeat extends it.
				case "slow" -> Thread.sleep(1500);
				case "flaky" -> {
					if (this.flakyRuns.incrementAndGet() == 1) {
						throw new IllegalStateException("the first run fails and is retried");
					}
				}
				case "bad" -> {
					this.badRuns.incrementAndGet();
					throw new NonRetryableTaskException("never works");
				}
				default -> {
				}
			}
			this.done.add(context.id());
		}

	}

}
