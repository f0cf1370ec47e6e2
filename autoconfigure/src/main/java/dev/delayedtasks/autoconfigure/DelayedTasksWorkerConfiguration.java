package dev.delayedtasks.autoconfigure;

import java.lang.reflect.Method;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.internal.annotation.DelayedTaskHandlerBeanPostProcessor;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisQueueHistory;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskHandoffs;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.internal.worker.FailureRouter;
import dev.delayedtasks.internal.worker.HandlerContainerFactory;
import dev.delayedtasks.internal.worker.InstanceHeartbeat;
import dev.delayedtasks.internal.worker.LatenessRecorder;
import dev.delayedtasks.internal.worker.Listeners;
import dev.delayedtasks.internal.worker.OccurrenceGate;
import dev.delayedtasks.internal.worker.QueueDefaults;
import dev.delayedtasks.internal.worker.QueueHistoryRecorder;
import dev.delayedtasks.internal.worker.RunObservations;
import dev.delayedtasks.internal.worker.WorkerSettings;
import dev.delayedtasks.observation.TaskRunObservationConvention;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnThreading;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * The worker side: handler discovery, the handler registry and what it runs on. Off with
 * {@code delayed-tasks.worker.enabled=false} for producer-only applications.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "delayed-tasks.worker.enabled", matchIfMissing = true)
class DelayedTasksWorkerConfiguration {

	private static final Log logger = LogFactory.getLog(DelayedTasksWorkerConfiguration.class);

	private static final String HANDLER_THREAD_PREFIX = "delayed-tasks-handler-";

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DelayedTaskHandlerBeanPostProcessor delayedTaskHandlerBeanPostProcessor() {
		return new DelayedTaskHandlerBeanPostProcessor();
	}

	/**
	 * Handlers of every queue run here, a thread per running handler, reused; each
	 * queue's permits bound how many of its handlers run at once. It accepts tasks after
	 * the context starts closing, because the registry stops (and its handlers finish)
	 * after that. Like the scheduler below, not a default candidate: injected only by its
	 * name, it neither makes the application's own injection of an {@code Executor}
	 * ambiguous nor makes Boot's {@code applicationTaskExecutor} back off.
	 * @return the handler executor
	 */
	@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
	@ConditionalOnMissingBean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME)
	@ConditionalOnThreading(Threading.PLATFORM)
	ThreadPoolTaskExecutor delayedTasksHandlerExecutor() {
		ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
		executor.setThreadNamePrefix(HANDLER_THREAD_PREFIX);
		executor.setCorePoolSize(0);
		executor.setQueueCapacity(0);
		executor.setAcceptTasksAfterContextClose(true);
		return executor;
	}

	@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
	@ConditionalOnMissingBean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME)
	@ConditionalOnThreading(Threading.VIRTUAL)
	SimpleAsyncTaskExecutor delayedTasksHandlerExecutorVirtualThreads() {
		SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor(HANDLER_THREAD_PREFIX);
		executor.setVirtualThreads(true);
		return executor;
	}

	/**
	 * Handler timeouts and local lease checks fire here. One thread is enough, as they
	 * never wait on Redis; it keeps firing while the context closes, because handlers
	 * still run then. Not Boot's {@code SimpleAsyncTaskScheduler} for virtual threads
	 * either: it stops scheduling as soon as the context starts closing.
	 * @return the task scheduler
	 */
	@Bean(name = DelayedTaskHandlerRegistry.TASK_SCHEDULER_BEAN_NAME, defaultCandidate = false)
	@ConditionalOnMissingBean(name = DelayedTaskHandlerRegistry.TASK_SCHEDULER_BEAN_NAME)
	@ConditionalOnThreading(Threading.PLATFORM)
	ThreadPoolTaskScheduler delayedTasksTaskScheduler() {
		return taskScheduler(false);
	}

	@Bean(name = DelayedTaskHandlerRegistry.TASK_SCHEDULER_BEAN_NAME, defaultCandidate = false)
	@ConditionalOnMissingBean(name = DelayedTaskHandlerRegistry.TASK_SCHEDULER_BEAN_NAME)
	@ConditionalOnThreading(Threading.VIRTUAL)
	ThreadPoolTaskScheduler delayedTasksTaskSchedulerVirtualThreads() {
		return taskScheduler(true);
	}

	private static ThreadPoolTaskScheduler taskScheduler(boolean virtualThreads) {
		ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
		scheduler.setThreadNamePrefix("delayed-tasks-scheduler-");
		scheduler.setDaemon(true);
		scheduler.setVirtualThreads(virtualThreads);
		// Every run with a timeout schedules one and cancels it when the handler returns.
		scheduler.setRemoveOnCancelPolicy(true);
		scheduler.setAcceptTasksAfterContextClose(true);
		return scheduler;
	}

	@Bean
	@ConditionalOnMissingBean
	HandlerContainerFactory delayedTasksHandlerContainerFactory(TaskStore store,
			RedisConnectionFactory connectionFactory, StoreSettings storeSettings, PayloadCodec codec,
			DelayedTasksProperties properties, ObjectProvider<DelayedTaskListener> listeners, Environment environment,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<TaskRunObservationConvention> observationConvention, BeanFactory beanFactory,
			@Qualifier(DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME) Executor handlerExecutor,
			@Qualifier(DelayedTaskHandlerRegistry.TASK_SCHEDULER_BEAN_NAME) TaskScheduler taskScheduler,
			ObjectProvider<OccurrenceGate> occurrenceGate, TaskHandoffs handoffs) {
		DelayedTasksProperties.Worker worker = properties.worker();
		warnIfShutdownTimeoutTooLong(worker.shutdownTimeout(), environment);
		WorkerSettings settings = new WorkerSettings(worker.leaseDuration(), worker.reapGrace(), worker.timerTtl(),
				worker.blockTimeout(), worker.shutdownTimeout(), worker.interruptOnShutdown(), worker.maxClaim());
		HandlerContainerFactory.Builder builder = HandlerContainerFactory.builder();
		if (worker.handOff() && isOwnHandlerExecutor(beanFactory)) {
			builder.taskHandoffs(handoffs);
		}
		return builder.store(store)
			.connectionFactory(connectionFactory)
			.workerSettings(settings)
			.storeSettings(storeSettings)
			.codec(codec)
			.failureRouter(new FailureRouter())
			.listeners(new Listeners(listeners.orderedStream().toList()))
			.observations(new RunObservations(observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP),
					observationConvention.getIfUnique()))
			.queueDefaults((queue) -> queueDefaults(properties, queue))
			.beanFactory(beanFactory)
			.handlerExecutor(handlerExecutor)
			.taskScheduler(taskScheduler)
			.occurrenceGate(occurrenceGate.getIfUnique(() -> OccurrenceGate.OPEN))
			.build();
	}

	/**
	 * Whether the handler executor is one of this configuration's, which never runs a
	 * task on the calling thread: a hand-off runs {@code execute} on the thread that
	 * called {@code schedule}, and an executor of the application's own might run the
	 * handler there.
	 * @param beanFactory the bean factory
	 * @return whether hand-offs may use it
	 */
	private static boolean isOwnHandlerExecutor(BeanFactory beanFactory) {
		if (!(beanFactory instanceof ConfigurableListableBeanFactory factory)
				|| !factory.containsBeanDefinition(DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME)) {
			return false;
		}
		BeanDefinition definition = factory
			.getMergedBeanDefinition(DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME);
		Method factoryMethod = (definition instanceof RootBeanDefinition root) ? root.getResolvedFactoryMethod() : null;
		return factoryMethod != null && factoryMethod.getDeclaringClass() == DelayedTasksWorkerConfiguration.class;
	}

	/**
	 * What the properties say about a queue: {@code delayed-tasks.queues.<queue>.*}, then
	 * the global settings. Producers take the max retries from the same place, so every
	 * instance gives the queue's tasks the same max attempts.
	 * @param properties the bound properties
	 * @param queue the queue
	 * @return the queue's defaults
	 */
	private static QueueDefaults queueDefaults(DelayedTasksProperties properties, String queue) {
		DelayedTasksProperties.Retry retry = properties.retry(queue);
		return new QueueDefaults(properties.concurrency(queue), properties.timeout(queue), retry.toRetryPolicy(),
				retry.maxRetries(), properties.limits(queue));
	}

	@Bean(name = DelayedTaskHandlerRegistry.BEAN_NAME)
	@ConditionalOnMissingBean
	DelayedTaskHandlerRegistry delayedTaskHandlerRegistry(HandlerContainerFactory containerFactory) {
		return new DelayedTaskHandlerRegistry(containerFactory);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "delayed-tasks.monitoring.history", matchIfMissing = true)
	QueueHistoryRecorder delayedTasksQueueHistoryRecorder(StoreScripts scripts, StoreSettings storeSettings,
			ObjectProvider<DelayedTaskHandlerRegistry> registry, LatenessRecorder lateness) {
		// Looked up when recording, not injected: a bean that depends on the handler
		// registry is stopped before it, and the last record must follow the handlers'
		// stop.
		return new QueueHistoryRecorder(new RedisQueueHistory(scripts, storeSettings), () -> {
			Set<String> queues = new TreeSet<>();
			registry.getObject().getHandlers().forEach((handler) -> queues.add(handler.queue()));
			return queues;
		}, lateness);
	}

	// A listener, so the worker tells it of every run it starts.
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "delayed-tasks.monitoring.history", matchIfMissing = true)
	LatenessRecorder delayedTasksLatenessRecorder() {
		return new LatenessRecorder();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "delayed-tasks.monitoring.instances", matchIfMissing = true)
	InstanceHeartbeat delayedTasksInstanceHeartbeat(RedisInstanceRegistry instances,
			HandlerContainerFactory containerFactory, ObjectProvider<DelayedTaskHandlerRegistry> registry,
			Environment environment) {
		// Looked up when reporting, not injected: a bean that depends on the handler
		// registry is stopped before it, and the instance must stay listed until its
		// handlers have stopped.
		return new InstanceHeartbeat(instances, containerFactory.instanceId(),
				environment.getProperty("spring.application.name", ""), () -> registry.getObject().getHandlers(),
				Clock.systemUTC());
	}

	private static void warnIfShutdownTimeoutTooLong(Duration shutdownTimeout, Environment environment) {
		Duration phase = Binder.get(environment)
			.bind("spring.lifecycle.timeout-per-shutdown-phase", Duration.class)
			.orElse(Duration.ofSeconds(30));
		if (shutdownTimeout.compareTo(phase) >= 0) {
			logger.warn("delayed-tasks.worker.shutdown-timeout (" + shutdownTimeout
					+ ") is not below spring.lifecycle.timeout-per-shutdown-phase (" + phase
					+ "): Spring may stop the Redis connection before unfinished tasks are released, and they would "
					+ "then wait for their leases to expire. Lower the first or raise the second.");
		}
	}

}
