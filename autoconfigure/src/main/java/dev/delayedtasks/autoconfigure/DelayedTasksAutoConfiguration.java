package dev.delayedtasks.autoconfigure;

import java.util.function.ToIntFunction;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.observation.ScheduleObservationConvention;
import dev.delayedtasks.store.DeadLetterRetention;
import dev.delayedtasks.store.EvictionPolicyCheck;
import dev.delayedtasks.store.LayoutVersion;
import dev.delayedtasks.store.PayloadCodec;
import dev.delayedtasks.store.PayloadLimits;
import dev.delayedtasks.store.QueueIndex;
import dev.delayedtasks.store.RedisDeadLetters;
import dev.delayedtasks.store.RedisDelayedTaskScheduler;
import dev.delayedtasks.store.RedisQueueControl;
import dev.delayedtasks.store.RedisQueueStats;
import dev.delayedtasks.store.RedisTaskStore;
import dev.delayedtasks.store.StoreScripts;
import dev.delayedtasks.store.StoreSettings;
import dev.delayedtasks.store.TaskStore;
import dev.delayedtasks.store.TopologyRefreshCheck;
import dev.delayedtasks.worker.Listeners;
import io.micrometer.observation.ObservationRegistry;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

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
@Import(DelayedTasksWorkerConfiguration.class)
public final class DelayedTasksAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	StoreSettings delayedTasksStoreSettings(DelayedTasksProperties properties) {
		DelayedTasksProperties.Worker worker = properties.worker();
		return StoreSettings.of(properties.keyPrefix(), worker.leaseDuration(), worker.reapGrace(),
				worker.maxDeliveries(), properties.deadLetter().retention(), properties.deadLetter().maxCount());
	}

	@Bean
	@ConditionalOnMissingBean
	StoreScripts delayedTasksStoreScripts(RedisConnectionFactory connectionFactory) {
		return new StoreScripts(new StringRedisTemplate(connectionFactory));
	}

	@Bean
	@ConditionalOnMissingBean
	PayloadCodec delayedTasksPayloadCodec(ObjectProvider<JsonMapper> jsonMapper, DelayedTasksProperties properties) {
		DelayedTasksProperties.Producer producer = properties.producer();
		return new PayloadCodec(jsonMapper.getIfAvailable(JsonMapper::shared),
				new PayloadLimits(producer.maxPayloadSize(), producer.maxHeaders(), producer.maxHeadersSize()),
				properties.includePayloadInErrors());
	}

	@Bean
	@ConditionalOnMissingBean
	QueueIndex delayedTasksQueueIndex(RedisConnectionFactory connectionFactory, StoreSettings settings) {
		return new QueueIndex(new StringRedisTemplate(connectionFactory), settings.keyPrefix());
	}

	@Bean
	@ConditionalOnMissingBean(DelayedTaskScheduler.class)
	RedisDelayedTaskScheduler delayedTaskScheduler(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, DelayedTasksProperties properties, ObjectProvider<DelayedTaskListener> listeners,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<ScheduleObservationConvention> observationConvention) {
		// Max attempts when a request sets none: the queue's configured max retries + 1,
		// the same on every instance, whether or not it hosts the queue's handler.
		ToIntFunction<String> maxAttempts = (queue) -> properties.retry(queue).maxRetries() + 1;
		Listeners onScheduled = new Listeners(listeners.orderedStream().toList());
		return new RedisDelayedTaskScheduler(scripts, settings, codec, queues, maxAttempts,
				properties.producer().batchSize(), properties.producer().batchBytes(), onScheduled,
				observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP), observationConvention.getIfUnique());
	}

	/**
	 * On every instance, producer-only ones too: pausing a queue acts on every instance.
	 * @param connectionFactory the connection to Redis
	 * @param settings the store settings
	 * @return the queue control
	 */
	@Bean
	@ConditionalOnMissingBean(QueueControl.class)
	RedisQueueControl delayedTasksQueueControl(RedisConnectionFactory connectionFactory, StoreSettings settings) {
		return new RedisQueueControl(new StringRedisTemplate(connectionFactory), settings);
	}

	@Bean
	@ConditionalOnMissingBean(DeadLetters.class)
	RedisDeadLetters delayedTaskDeadLetters(StoreScripts scripts, StoreSettings settings) {
		return new RedisDeadLetters(scripts, settings);
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
	 * eviction policy, topology refresh on a Cluster, and the key layout version.
	 * @param connectionFactory the connection factory
	 * @param settings the store settings
	 * @param queues the queue index
	 * @param properties the properties
	 * @param environment the environment, for the Redis connection properties
	 * @return the checks
	 */
	@Bean
	SmartInitializingSingleton delayedTasksStartupChecks(RedisConnectionFactory connectionFactory,
			StoreSettings settings, QueueIndex queues, DelayedTasksProperties properties, Environment environment) {
		StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
		LayoutVersion layout = new LayoutVersion(redis, settings, queues);
		DelayedTasksProperties.CheckMode eviction = properties.evictionPolicyCheck();
		return () -> {
			new RedisCredentialsCheck(environment).verify();
			if (eviction != DelayedTasksProperties.CheckMode.OFF) {
				new EvictionPolicyCheck(redis, eviction == DelayedTasksProperties.CheckMode.FAIL).verify();
			}
			new TopologyRefreshCheck(connectionFactory).verify();
			layout.verify();
		};
	}

}
