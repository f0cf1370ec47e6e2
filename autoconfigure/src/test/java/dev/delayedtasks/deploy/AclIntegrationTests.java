package dev.delayedtasks.deploy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.store.RedisQueueStats;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
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
 * The library works as a Redis user with exactly the README's ACL line, and a user that
 * lacks one of its permissions fails with a message that says so. The users are created
 * on a private server from the line in README.md.
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
	void theReadmeAclLetsTheLibraryDoEverythingAndRedisRefusesNothing() {
		createUser("delayed-tasks", readmeRules(this.redis.keyPrefix()));
		runnerAs("delayed-tasks").withUserConfiguration(Handlers.class).run((context) -> {
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
		});
		// Also what the library shrugs off (a denied INFO, a failed BLPOP it retries)
		// would show here.
		assertThat(aclLogBeyondTheHandshake()).isEmpty();
	}

	@Test
	void aUserConfinedToAnotherKeyPrefixStopsStartupNamingTheFix() {
		createUser("elsewhere", readmeRules("elsewhere"));
		runnerAs("elsewhere").withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(DelayedTaskException.class)
				.hasMessageContaining("key prefix '" + this.redis.keyPrefix() + "'")
				.hasMessageContaining("NOPERM")
				.hasMessageContaining("README (Deployment, ACL)");
		});
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
				.withMessageContaining("README (Deployment, ACL)");
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
				.withMessageContaining("README (Deployment, ACL)");
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
