package dev.delayedtasks.deploy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.deploy.AclIntegrationTests.Handlers;
import dev.delayedtasks.deploy.AclIntegrationTests.Job;
import dev.delayedtasks.deploy.AclIntegrationTests.UserConnection;
import dev.delayedtasks.internal.store.script.FunctionLibrary;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.FlushMode;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
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
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code delayed-tasks.scripts.mode=functions} on Redis 7: the application runs as a user
 * with the README's Functions line, which has {@code FCALL} and no {@code EVAL}, once an
 * administrator loaded the library; that user's own Lua is refused; a missing library
 * stops startup, or a call, with the command that loads it; an application allowed to
 * load it does so at startup and again after the server lost it; and two versions of the
 * library live side by side.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class FunctionsModeIntegrationTests {

	private static final String PASSWORD = "functions-test-password";

	private static final String QUEUE = "acl";

	private final TestRedis redis;

	private final FunctionLibrary library = new FunctionLibrary();

	private RedisClient adminClient;

	private StatefulRedisConnection<String, String> admin;

	FunctionsModeIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connectAsAdminWithoutLibraries() {
		assumeThat(this.redis.version()).as("Redis Functions need Redis 7").doesNotStartWith("6.");
		this.adminClient = RedisClient.create(this.redis.uri());
		this.admin = this.adminClient.connect();
		this.admin.sync().functionFlush(FlushMode.SYNC);
		this.admin.sync().aclLogReset();
	}

	@AfterEach
	void disconnect() {
		if (this.admin != null) {
			this.admin.close();
			this.adminClient.shutdown();
		}
	}

	@Test
	void theFunctionsLineRunsEverythingOnceAnAdministratorLoadedTheLibrary(CapturedOutput output) {
		assertThat(this.admin.sync().functionLoad(this.library.text())).isEqualTo(this.library.name());
		createUser("delayed-tasks", functionsRules());
		runnerAs("delayed-tasks").withUserConfiguration(Handlers.class).run(AclIntegrationTests::doEverything);
		assertThat(aclLogBeyondTheHandshake()).isEmpty();
		assertThat(output).doesNotContain("Could not read Redis's maxmemory-policy")
			.doesNotContain("Loaded the Redis function library");
	}

	@Test
	void theFunctionsLineRefusesTheUsersOwnLuaWhileTheEvalLineRunsIt() {
		createUser("delayed-tasks", functionsRules());
		createUser("with-eval", ReadmeAcl.read().rules(this.redis.keyPrefix(), PASSWORD));
		try (UserConnection user = connectAs("delayed-tasks"); UserConnection withEval = connectAs("with-eval")) {
			assertThatExceptionOfType(RedisCommandExecutionException.class)
				.isThrownBy(() -> user.connection().sync().eval("while true do end", ScriptOutputType.STATUS))
				.withMessageContaining("NOPERM")
				.withMessageContaining("'eval'");
			assertThatExceptionOfType(RedisCommandExecutionException.class)
				.isThrownBy(
						() -> user.connection()
							.sync()
							.functionLoad("#!lua name=mine\nredis.register_function('mine', "
									+ "function() while true do end end)"))
				.withMessageContaining("NOPERM");
			assertThat(withEval.connection()
				.sync()
				.<Long>eval("local i = 0 while i < 100000 do i = i + 1 end return i", ScriptOutputType.INTEGER))
				.isEqualTo(100000L);
		}
	}

	@Test
	void aMissingLibraryStopsStartupWithTheCommandThatLoadsIt() {
		createUser("delayed-tasks", functionsRules());
		runnerAs("delayed-tasks").withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(DelayedTaskException.class)
				.hasMessageContaining("Redis has no function library " + this.library.name() + " on "
						+ this.redis.host() + ":" + this.redis.port())
				.hasMessageContaining("java -cp delayed-tasks-spring-boot-<version>.jar "
						+ FunctionLibrary.class.getName() + " | redis-cli -h " + this.redis.host() + " -p "
						+ this.redis.port() + " --user <admin> --askpass -x FUNCTION LOAD")
				.hasMessageContaining("delayed-tasks.scripts.load-library=true");
		});
	}

	@Test
	void aServerThatLostTheLibraryFailsEachCallNamingTheFix() {
		this.admin.sync().functionLoad(this.library.text());
		createUser("delayed-tasks", functionsRules());
		runnerAs("delayed-tasks").withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.enqueue("functions", new Job("ok"));
			this.admin.sync().functionFlush(FlushMode.SYNC);
			assertThatExceptionOfType(TaskStoreException.class)
				.isThrownBy(() -> scheduler.enqueue("functions", new Job("ok")))
				.withMessageContaining("enqueue.lua")
				.withMessageContaining("Redis has no function " + this.library.functionName(Script.ENQUEUE))
				.withMessageContaining("FUNCTION FLUSH")
				.withMessageContaining("-x FUNCTION LOAD");
			// The non-blocking path sends FCALL too, and fails alike.
			assertThat(scheduler.scheduleAsync("functions", new Job("ok"), Duration.ZERO))
				.failsWithin(Duration.ofSeconds(10))
				.withThrowableOfType(ExecutionException.class)
				.havingCause()
				.isInstanceOf(TaskStoreException.class)
				.withMessageContaining("Redis has no function " + this.library.functionName(Script.ENQUEUE))
				.withMessageContaining("-x FUNCTION LOAD");
		});
	}

	@Test
	void anApplicationAllowedToLoadTheLibraryLoadsItAtStartupAndAgainWhenTheServerLostIt(CapturedOutput output) {
		List<String> rules = new ArrayList<>(functionsRules());
		rules.add("+function|load");
		createUser("loader", rules);
		runnerAs("loader")
			.withPropertyValues("delayed-tasks.worker.enabled=false", "delayed-tasks.scripts.load-library=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(libraries()).containsExactly(this.library.name());
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				scheduler.enqueue("functions", new Job("ok"));
				this.admin.sync().functionFlush(FlushMode.SYNC);
				TaskId id = scheduler.enqueue("functions", new Job("ok"));
				assertThat(scheduler.find("functions", id)).isPresent();
				assertThat(libraries()).containsExactly(this.library.name());
				// The non-blocking path loads it again too, off the I/O thread, and
				// retries.
				this.admin.sync().functionFlush(FlushMode.SYNC);
				TaskId async = scheduler.scheduleAsync("functions", new Job("ok"), Duration.ZERO)
					.get(10, TimeUnit.SECONDS);
				assertThat(scheduler.find("functions", async)).isPresent();
				assertThat(libraries()).containsExactly(this.library.name());
			});
		assertThat(output.toString().split("Loaded the Redis function library " + this.library.name(), -1)).hasSize(4);
	}

	@Test
	void aFullRedisRefusesNewTasksButStillRunsAndCompletesTheOnesItHolds() {
		this.admin.sync().functionLoad(this.library.text());
		createUser("delayed-tasks", functionsRules());
		runnerAs("delayed-tasks").withUserConfiguration(Handlers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			List<TaskId> held = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				held.add(scheduler.schedule(QUEUE, new Job("ok"), Duration.ofMillis(1500)));
			}
			this.admin.sync().configSet("maxmemory", "1");
			try {
				// enqueue has no allow-oom flag: refused before it writes anything.
				assertThatExceptionOfType(TaskStoreException.class)
					.isThrownBy(() -> scheduler.enqueue(QUEUE, new Job("ok")))
					.withMessageContaining("OOM");
				// promote, claim, extend and ack have it: the held tasks run and
				// complete.
				Handlers handlers = context.getBean(Handlers.class);
				await().atMost(Duration.ofSeconds(15)).until(() -> handlers.done.containsAll(held));
				await().atMost(Duration.ofSeconds(5))
					.until(() -> held.stream().allMatch((id) -> scheduler.find(QUEUE, id).isEmpty()));
			}
			finally {
				this.admin.sync().configSet("maxmemory", "0");
			}
		});
	}

	@Test
	void twoVersionsOfTheLibraryLiveSideBySide() {
		String otherVersion = this.library.text()
			.replace(this.library.name().substring("delayedtasks_".length()), "0123456789ab");
		this.admin.sync().functionLoad(otherVersion);
		this.admin.sync().functionLoad(this.library.text());
		assertThat(libraries()).containsExactlyInAnyOrder("delayedtasks_0123456789ab", this.library.name());
		createUser("delayed-tasks", functionsRules());
		runnerAs("delayed-tasks").withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			TaskId id = context.getBean(DelayedTaskScheduler.class).enqueue("functions", new Job("ok"));
			assertThat(context.getBean(DelayedTaskScheduler.class).find("functions", id)).isPresent();
		});
	}

	private List<String> libraries() {
		return this.admin.sync()
			.functionList()
			.stream()
			.map((library) -> String.valueOf(library.get("library_name")))
			.toList();
	}

	private List<String> functionsRules() {
		return ReadmeAcl.readFunctions().rules(this.redis.keyPrefix(), PASSWORD);
	}

	private ApplicationContextRunner runnerAs(String user) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
					"spring.data.redis.port=" + this.redis.port(), "spring.data.redis.username=" + user,
					"spring.data.redis.password=" + PASSWORD, "delayed-tasks.key-prefix=" + this.redis.keyPrefix(),
					"delayed-tasks.scripts.mode=functions", "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s",
					"delayed-tasks.retry.delay=100ms");
	}

	private UserConnection connectAs(String user) {
		return UserConnection.open(this.redis, user, PASSWORD);
	}

	private void createUser(String name, List<String> rules) {
		CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8).add("SETUSER").add(name).add("reset");
		rules.forEach(args::add);
		assertThat(this.admin.sync().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), args))
			.isEqualTo("OK");
	}

	private List<Map<String, Object>> aclLogBeyondTheHandshake() {
		return this.admin.sync().aclLog().stream().filter((entry) -> !"client".equals(entry.get("object"))).toList();
	}

}
