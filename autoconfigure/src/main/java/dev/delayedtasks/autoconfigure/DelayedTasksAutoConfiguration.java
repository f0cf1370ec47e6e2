package dev.delayedtasks.autoconfigure;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.ReactiveDelayedTaskScheduler;
import dev.delayedtasks.internal.admin.DeadLetterRetention;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.admin.RedisQueueControl;
import dev.delayedtasks.internal.producer.OutageBuffer;
import dev.delayedtasks.internal.producer.ProducerLifecycle;
import dev.delayedtasks.internal.producer.QueueDeclarations;
import dev.delayedtasks.internal.producer.RedisDelayedTaskScheduler;
import dev.delayedtasks.internal.producer.WarmStart;
import dev.delayedtasks.internal.server.EvictionPolicyCheck;
import dev.delayedtasks.internal.server.RedisCredentialsCheck;
import dev.delayedtasks.internal.server.RedisServerCheck;
import dev.delayedtasks.internal.server.TopologyRefreshCheck;
import dev.delayedtasks.internal.store.LayoutVersion;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskHandoffs;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.codec.PayloadLimits;
import dev.delayedtasks.internal.store.script.EvalScriptCall;
import dev.delayedtasks.internal.store.script.FunctionLibraries;
import dev.delayedtasks.internal.store.script.FunctionLibrary;
import dev.delayedtasks.internal.store.script.FunctionScriptCall;
import dev.delayedtasks.internal.store.script.ReactiveStoreScripts;
import dev.delayedtasks.internal.store.script.RedisMasters;
import dev.delayedtasks.internal.store.script.ScriptClock;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.internal.tracking.OutcomeTracker;
import dev.delayedtasks.internal.worker.HandlerEndpoint;
import dev.delayedtasks.internal.worker.Listeners;
import dev.delayedtasks.observation.ScheduleObservationConvention;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.ClassUtils;

/**
 * Auto-configuration of the delayed-tasks store: a {@link DelayedTaskScheduler} and
 * {@link DeadLetters} on the application's {@link RedisConnectionFactory}, with the
 * library's own string template (never the application's {@code RedisTemplate} and its
 * serializers).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration" })
@ConditionalOnClass({ StringRedisTemplate.class, JsonMapper.class })
@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "delayed-tasks.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DelayedTasksProperties.class)
@Import({ DelayedTasksWorkerConfiguration.class, DelayedTasksRecurringConfiguration.class })
public final class DelayedTasksAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DelayedTasksAutoConfiguration.class);

	/**
	 * Binds an empty {@code delayed-tasks.queues.<name>=} entry (a declared queue without
	 * overrides) on every supported Spring Boot version.
	 * @return the converter
	 */
	@Bean
	@ConfigurationPropertiesBinding
	static EmptyQueueEntryConverter delayedTasksEmptyQueueEntryConverter() {
		return new EmptyQueueEntryConverter();
	}

	@Bean
	@ConditionalOnMissingBean
	StoreSettings delayedTasksStoreSettings(DelayedTasksProperties properties) {
		DelayedTasksProperties.Worker worker = properties.worker();
		return StoreSettings.of(properties.keyPrefix(), worker.leaseDuration(), worker.reapGrace(),
				worker.maxDeliveries(), properties.deadLetter().retention(), properties.deadLetter().maxCount(),
				properties.deadLetter().keepExpired(), worker.timerTtl());
	}

	@Bean
	@ConditionalOnMissingBean
	RedisMasters delayedTasksRedisMasters(RedisConnectionFactory connectionFactory) {
		// The command timeout of the application's connection; Lettuce's own default
		// (60 s) where the factory is not Lettuce's, though Functions need Lettuce.
		Duration timeout = (connectionFactory instanceof LettuceConnectionFactory lettuce)
				? Duration.ofMillis(lettuce.getTimeout()) : Duration.ofSeconds(60);
		return new RedisMasters(new StringRedisTemplate(connectionFactory), timeout);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = "delayed-tasks.scripts.mode", havingValue = "functions")
	FunctionLibraries delayedTasksFunctionLibraries(RedisMasters masters, DelayedTasksProperties properties,
			ObjectProvider<ScriptClock> clock) {
		return new FunctionLibraries(masters, new FunctionLibrary(clock.getIfAvailable(() -> ScriptClock.REDIS)),
				properties.scripts().loadLibrary());
	}

	/**
	 * The scripts, sent with EVALSHA/EVAL or, in functions mode, with FCALL.
	 * @param connectionFactory the connection to Redis
	 * @param masters the masters, for FCALL
	 * @param libraries the function library in functions mode
	 * @param properties the properties
	 * @param clock the clock of the scripts: Redis time, unless delayed-tasks-test puts
	 * them on its test clock
	 * @return the scripts
	 */
	@Bean
	@ConditionalOnMissingBean
	StoreScripts delayedTasksStoreScripts(RedisConnectionFactory connectionFactory, RedisMasters masters,
			ObjectProvider<FunctionLibraries> libraries, DelayedTasksProperties properties,
			ObjectProvider<ScriptClock> clock) {
		StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
		FunctionLibraries functions = libraries.getIfAvailable();
		return (functions != null)
				? new StoreScripts(redis,
						new FunctionScriptCall(masters, functions, properties.scripts().loadLibrary()))
				: new StoreScripts(redis, new EvalScriptCall(redis, clock.getIfAvailable(() -> ScriptClock.REDIS)));
	}

	@Bean
	@ConditionalOnMissingBean
	PayloadCodec delayedTasksPayloadCodec(ObjectProvider<JsonMapper> jsonMapper, DelayedTasksProperties properties) {
		DelayedTasksProperties.Producer producer = properties.producer();
		return new PayloadCodec(
				jsonMapper.getIfAvailable(JsonMapper::shared), new PayloadLimits(producer.maxPayloadSize(),
						producer.maxHeaders(), producer.maxHeadersSize(), properties.results().maxSize()),
				properties.includePayloadInErrors());
	}

	@Bean
	@ConditionalOnMissingBean
	QueueIndex delayedTasksQueueIndex(RedisConnectionFactory connectionFactory, StoreSettings settings,
			DelayedTasksProperties properties) {
		return new QueueIndex(new StringRedisTemplate(connectionFactory), settings.keyPrefix(),
				properties.monitoring().queueIndexWarnThreshold());
	}

	@Bean
	@ConditionalOnMissingBean
	RedisQueueBrowser delayedTasksQueueBrowser(RedisConnectionFactory connectionFactory, StoreSettings settings) {
		return new RedisQueueBrowser(new StringRedisTemplate(connectionFactory), settings.keyPrefix());
	}

	@Bean
	@ConditionalOnMissingBean
	RedisInstanceRegistry delayedTasksInstanceRegistry(RedisConnectionFactory connectionFactory,
			StoreSettings settings) {
		return new RedisInstanceRegistry(new StringRedisTemplate(connectionFactory), settings.keyPrefix());
	}

	/**
	 * The queues this application knows: the names under {@code delayed-tasks.queues},
	 * and the queues of this instance's handlers (none on a producer-only instance),
	 * looked up when a task is scheduled, as handlers register while the context starts.
	 * @param properties the properties
	 * @param handlerRegistry the handler registry, absent on a producer-only instance
	 * @return the declarations
	 */
	@Bean
	@ConditionalOnMissingBean
	QueueDeclarations delayedTasksQueueDeclarations(DelayedTasksProperties properties,
			ObjectProvider<DelayedTaskHandlerRegistry> handlerRegistry) {
		Function<String, Optional<QueueDeclarations.HandledQueue>> handlerOf = (queue) -> {
			DelayedTaskHandlerRegistry registry = handlerRegistry.getIfAvailable();
			return (registry != null) ? registry.getEndpointForQueue(queue)
				.map((endpoint) -> new QueueDeclarations.HandledQueue("@DelayedTaskHandler " + endpoint.id(),
						endpoint.method().payloadType()))
					: Optional.empty();
		};
		Supplier<Collection<String>> handledQueues = () -> {
			DelayedTaskHandlerRegistry registry = handlerRegistry.getIfAvailable();
			return (registry != null) ? registry.getEndpoints().stream().map(HandlerEndpoint::queue).toList()
					: List.of();
		};
		return QueueDeclarations.of(properties.queues().keySet(), properties.producer().declaredQueuesOnly(), handlerOf,
				handledQueues);
	}

	@Bean
	@ConditionalOnMissingBean(DelayedTaskScheduler.class)
	RedisDelayedTaskScheduler delayedTaskScheduler(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, DelayedTasksProperties properties, ObjectProvider<DelayedTaskListener> listeners,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<ScheduleObservationConvention> observationConvention, QueueDeclarations declarations,
			RedisConnectionFactory connectionFactory, ResourceLoader resourceLoader, OutcomeTracker tracker,
			TaskHandoffs handoffs) {
		// Max attempts when a request sets none: the queue's configured max retries + 1,
		// the same on every instance, whether or not it hosts the queue's handler.
		ToIntFunction<String> maxAttempts = (queue) -> properties.retry(queue).maxRetries() + 1;
		Listeners onScheduled = new Listeners(listeners.orderedStream().toList());
		return new RedisDelayedTaskScheduler(scripts, settings, codec, queues, maxAttempts,
				properties.producer().batchSize(), properties.producer().batchBytes(), onScheduled,
				observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP), observationConvention.getIfUnique(),
				declarations, properties.producer().afterCommit(),
				reactiveScripts(connectionFactory, scripts, resourceLoader),
				outageBuffer(properties.producer().outageBuffer(), connectionFactory), properties::resultsRetention,
				tracker, handoffs);
	}

	/**
	 * Where this instance's dispatchers offer to take the ready tasks its blocking
	 * {@code schedule} calls create.
	 * @return the registry, empty until a dispatcher starts
	 */
	@Bean
	@ConditionalOnMissingBean
	TaskHandoffs delayedTasksHandoffs() {
		return new TaskHandoffs();
	}

	@Bean
	@ConditionalOnBean(RedisDelayedTaskScheduler.class)
	ProducerLifecycle delayedTasksProducerLifecycle(RedisDelayedTaskScheduler scheduler) {
		return new ProducerLifecycle(scheduler);
	}

	/**
	 * Tracks the tasks this instance asks about. Subscribes only when the first task is
	 * tracked.
	 * @param connectionFactory the connection factory
	 * @param scripts the scripts
	 * @param settings the key layout
	 * @param codec reads results
	 * @param properties the properties
	 * @return the tracker
	 */
	@Bean
	@ConditionalOnMissingBean
	OutcomeTracker delayedTasksOutcomeTracker(RedisConnectionFactory connectionFactory, StoreScripts scripts,
			StoreSettings settings, PayloadCodec codec, DelayedTasksProperties properties) {
		return new OutcomeTracker(connectionFactory, scripts, settings, codec, properties.results().trackedRetention());
	}

	private static OutageBuffer outageBuffer(DelayedTasksProperties.OutageBuffer properties,
			RedisConnectionFactory connectionFactory) {
		if (properties.enabled() && connectionFactory instanceof LettuceConnectionFactory lettuce
				&& lettuce.getTimeout() >= properties.maxWait().toMillis()) {
			// The tasks of a call in flight fail with it, at its command timeout.
			logger.warn("The outage buffer's max-wait (" + properties.maxWait()
					+ ") is not longer than the Redis command timeout (" + Duration.ofMillis(lettuce.getTimeout())
					+ ", spring.data.redis.timeout): a task whose call is in flight when Redis stops answering waits"
					+ " for that timeout instead. Set spring.data.redis.timeout below"
					+ " delayed-tasks.producer.outage-buffer.max-wait");
		}
		return properties.enabled()
				? OutageBuffer.of(properties.maxTasks(), properties.maxWait(), properties.shutdownWait())
				: OutageBuffer.disabled(properties.shutdownWait());
	}

	/**
	 * The scripts on the reactive side of the connection factory, which the non-blocking
	 * API runs on; without Reactor or a reactive side, that API runs the blocking calls
	 * on the calling thread.
	 * @param connectionFactory the connection factory
	 * @param scripts the blocking scripts
	 * @param resourceLoader the application's resource loader, for its class loader
	 * @return the reactive scripts, or {@code null}
	 */
	private static @Nullable ReactiveStoreScripts reactiveScripts(RedisConnectionFactory connectionFactory,
			StoreScripts scripts, ResourceLoader resourceLoader) {
		if (connectionFactory instanceof ReactiveRedisConnectionFactory reactive
				&& ClassUtils.isPresent("reactor.core.publisher.Mono", resourceLoader.getClassLoader())) {
			return new ReactiveStoreScripts(reactive, scripts);
		}
		return null;
	}

	/**
	 * On every instance, producer-only ones too: pausing a queue acts on every instance.
	 * @param scripts the store scripts
	 * @param settings the store settings
	 * @param index the index of known queues
	 * @param handlers this instance's handlers, if it runs any: a queue handled here is
	 * not removed
	 * @return the queue control
	 */
	@Bean
	@ConditionalOnMissingBean(QueueControl.class)
	RedisQueueControl delayedTasksQueueControl(StoreScripts scripts, StoreSettings settings, QueueIndex index,
			ObjectProvider<DelayedTaskHandlerRegistry> handlers) {
		return new RedisQueueControl(scripts, settings, index, (queue) -> {
			DelayedTaskHandlerRegistry registry = handlers.getIfAvailable();
			return (registry != null) ? registry.getEndpointForQueue(queue).map(HandlerEndpoint::id).orElse(null)
					: null;
		});
	}

	@Bean
	@ConditionalOnMissingBean(DeadLetters.class)
	RedisDeadLetters delayedTaskDeadLetters(StoreScripts scripts, StoreSettings settings, PayloadCodec codec) {
		return new RedisDeadLetters(scripts, settings, codec);
	}

	/**
	 * Dead-letter retention on every instance, workers and producers alike: trimming is
	 * idempotent and bounded, and a queue must stay bounded while no worker runs. It has
	 * its own {@link RedisDeadLetters}, so an application's own {@link DeadLetters} bean
	 * does not turn it off.
	 * @param scripts the store scripts
	 * @param settings the store settings
	 * @param index the index of known queues
	 * @return the dead-letter retention
	 */
	@Bean
	@ConditionalOnMissingBean
	DeadLetterRetention delayedTasksDeadLetterRetention(StoreScripts scripts, StoreSettings settings,
			QueueIndex index) {
		return new DeadLetterRetention(new RedisDeadLetters(scripts, settings), index,
				DeadLetterRetention.DEFAULT_INTERVAL);
	}

	@Bean
	@ConditionalOnMissingBean(TaskStore.class)
	RedisTaskStore delayedTaskStore(StoreScripts scripts, StoreSettings settings) {
		return new RedisTaskStore(scripts, settings);
	}

	@Bean
	@ConditionalOnMissingBean
	RedisQueueStats delayedTasksQueueStats(StoreScripts scripts, StoreSettings settings) {
		return new RedisQueueStats(scripts, settings);
	}

	/**
	 * The startup checks, once every singleton exists: the connection's credentials, the
	 * server versions (Lua sandbox fixes) and in functions mode the function library, the
	 * eviction policy, topology refresh on a Cluster, and the key layout version.
	 * @param connectionFactory the connection factory
	 * @param masters the masters
	 * @param libraries the function library in functions mode
	 * @param settings the store settings
	 * @param queues the queue index
	 * @param properties the properties
	 * @param environment the environment, for the Redis connection properties
	 * @return the checks
	 */
	@Bean
	SmartInitializingSingleton delayedTasksStartupChecks(RedisConnectionFactory connectionFactory, RedisMasters masters,
			ObjectProvider<FunctionLibraries> libraries, StoreSettings settings, QueueIndex queues,
			DelayedTasksProperties properties, Environment environment) {
		StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
		LayoutVersion layout = new LayoutVersion(redis, settings, queues);
		DelayedTasksProperties.CheckMode eviction = properties.evictionPolicyCheck();
		RedisServerCheck server = new RedisServerCheck(masters, libraries.getIfAvailable(),
				RedisServerCheck.SandboxCheck.valueOf(properties.luaSandboxCheck().name()));
		return () -> {
			new RedisCredentialsCheck(environment).verify();
			server.verify();
			if (eviction != DelayedTasksProperties.CheckMode.OFF) {
				new EvictionPolicyCheck(redis, eviction == DelayedTasksProperties.CheckMode.FAIL).verify();
			}
			new TopologyRefreshCheck(connectionFactory).verify();
			layout.verify();
		};
	}

	/**
	 * Warm start, after the startup checks: scripts loaded, connections open, the
	 * producer's path run once without sending.
	 * @param scripts the scripts
	 * @param codec the payload codec
	 * @param settings the store settings
	 * @param connectionFactory the connection factory
	 * @param resourceLoader the application's resource loader
	 * @return the warm start
	 */
	@Bean
	@ConditionalOnBooleanProperty(name = "delayed-tasks.warm-start", matchIfMissing = true)
	SmartInitializingSingleton delayedTasksWarmStart(StoreScripts scripts, PayloadCodec codec, StoreSettings settings,
			RedisConnectionFactory connectionFactory, ResourceLoader resourceLoader) {
		WarmStart warmStart = new WarmStart(scripts, reactiveScripts(connectionFactory, scripts, resourceLoader), codec,
				settings);
		return warmStart::run;
	}

	/**
	 * The {@link ReactiveDelayedTaskScheduler}, when Reactor is on the class path
	 * (Lettuce brings it).
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "reactor.core.publisher.Mono")
	static class ReactiveSchedulingConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ReactiveDelayedTaskScheduler reactiveDelayedTaskScheduler(DelayedTaskScheduler scheduler) {
			return ReactiveDelayedTaskScheduler.of(scheduler);
		}

	}

}
