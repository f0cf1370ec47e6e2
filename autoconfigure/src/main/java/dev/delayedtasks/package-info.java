/**
 * The application API of delayed tasks: {@link dev.delayedtasks.DelayedTaskScheduler} to
 * schedule, cancel and inspect tasks, {@link dev.delayedtasks.DeadLetters} for tasks that
 * failed for good, and their value types. No Redis types appear here.
 */
@NullMarked
package dev.delayedtasks;

import org.jspecify.annotations.NullMarked;
