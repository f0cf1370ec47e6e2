/**
 * Recurring schedules on Redis: the ticks of cron and fixed-rate schedules, the scripts
 * that turn each tick into one occurrence task, the gate that applies the misfire and
 * overlap policies before an occurrence runs, and the startup registration of declared
 * schedules.
 * <p>
 * <strong>Internal.</strong> Applications use {@link dev.delayedtasks.RecurringTasks} and
 * {@link dev.delayedtasks.annotation.Recurring}; these types are public only because the
 * auto-configuration creates them.
 */
@NullMarked
package dev.delayedtasks.internal.recurring;

import org.jspecify.annotations.NullMarked;
