package dev.delayedtasks.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.core.annotation.AliasFor;

/**
 * Marks a method that runs the tasks of a queue. Supported signatures:
 * {@code (P payload)}, {@code (P payload, TaskContext context)} and
 * {@code (TaskContext context)}, where the declared type of {@code P} (generics included)
 * decides how the stored JSON is read. A handler returns normally to complete the task,
 * throws to have it retried with back-off (then dead-lettered), or throws
 * {@link dev.delayedtasks.NonRetryableTaskException} to dead-letter it at once.
 * <p>
 * Delivery is at least once: a task can run again after a crash, a lost lease or a
 * timeout. Write idempotent handlers.
 * <p>
 * String attributes accept {@code ${...}} placeholders; durations accept {@code 10s} or
 * ISO-8601.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DelayedTaskHandler {

	/**
	 * Alias for {@link #queue()}.
	 * @return the queue
	 */
	@AliasFor("queue")
	String value() default "";

	/**
	 * The queue whose tasks this method runs.
	 * @return the queue
	 */
	@AliasFor("value")
	String queue() default "";

	/**
	 * The handler's id for the registry, metrics and the Actuator endpoint;
	 * {@code <beanName>.<methodName>} by default.
	 * @return the id
	 */
	String id() default "";

	/**
	 * How many tasks of the queue this instance runs at once;
	 * {@code delayed-tasks.queues.<queue>.concurrency} or
	 * {@code delayed-tasks.worker.concurrency} by default.
	 * @return the concurrency
	 */
	String concurrency() default "";

	/**
	 * Longest run: past it the handler thread is interrupted and the run counts as
	 * failed; no limit by default.
	 * @return the timeout, for example {@code 30s}
	 */
	String timeout() default "";

	/**
	 * Name of a {@link org.springframework.core.retry.RetryPolicy} bean that decides
	 * which exceptions are retried and the back-off; the queue's
	 * {@code delayed-tasks.queues.<queue>.retry.*} or {@code delayed-tasks.retry.*}
	 * policy by default. How many times a task runs is not the policy's to decide: every
	 * instance, producer-only ones included, stores the queue's configured
	 * {@code max-retries} + 1 as a task's max attempts, and a policy that allows a
	 * different number of retries gets a warning at startup.
	 * @return the bean name
	 */
	String retryPolicy() default "";

	/**
	 * Whether the handler starts with the application; {@code false} leaves it to
	 * {@link dev.delayedtasks.worker.DelayedTaskHandlerRegistry}.
	 * @return {@code "true"} or {@code "false"}
	 */
	String autoStartup() default "";

}
