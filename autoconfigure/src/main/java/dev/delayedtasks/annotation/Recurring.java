package dev.delayedtasks.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares a recurring schedule whose occurrences the annotated
 * {@link DelayedTaskHandler} method runs: every tick of the cron expression or fixed rate
 * becomes one task of the handler's queue, once whatever the number of instances. The
 * schedule is upserted at startup, so a changed expression takes effect from its next
 * tick. Every attribute accepts {@code ${...}} placeholders. <pre class="code">
 * &#64;DelayedTaskHandler(queue = "reports")
 * &#64;Recurring(id = "nightly-report", cron = "0 0 2 * * *", zone = "Europe/Paris")
 * void report(ReportRequest request) { ... }
 * </pre>
 *
 * @author delayed-tasks
 * @since 0.2.0
 * @see dev.delayedtasks.RecurringTasks
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Recurring {

	/**
	 * The schedule id: 1-40 letters, digits, '.', '-', '_', unique across queues.
	 * @return the id
	 */
	String id();

	/**
	 * A Spring cron expression (six fields, seconds first, or a macro such as
	 * {@code @daily}); exactly one of this and {@link #fixedRate()}.
	 * @return the expression
	 */
	String cron() default "";

	/**
	 * A fixed rate such as {@code 5m} or {@code PT5M}, at least one second; ticks at
	 * whole multiples of the rate since the epoch.
	 * @return the rate
	 */
	String fixedRate() default "";

	/**
	 * The zone the cron expression is read in, such as {@code Europe/Paris}; UTC by
	 * default.
	 * @return the zone id
	 */
	String zone() default "";

	/**
	 * The payload of every occurrence, as JSON (converted to the handler's payload type);
	 * none by default.
	 * @return the JSON text
	 */
	String payload() default "";

	/**
	 * The misfire policy: {@code SKIP} (default), {@code RUN_ONCE} or {@code RUN_ALL}.
	 * @return the policy name
	 */
	String misfire() default "";

	/**
	 * How many missed ticks {@code RUN_ALL} runs at most (1 by default).
	 * @return the bound
	 */
	String misfireBound() default "";

	/**
	 * How late an occurrence may start before its tick counts as missed (1 minute by
	 * default).
	 * @return the duration
	 */
	String misfireThreshold() default "";

	/**
	 * The overlap policy: {@code ALLOW} (default) or {@code SKIP}.
	 * @return the policy name
	 */
	String overlap() default "";

}
