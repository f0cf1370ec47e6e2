/**
 * The Redis store: the key layout, the Lua scripts (one atomic operation each, as
 * {@code .lua} resources beside this package) and the Java calls to them. Internal:
 * applications use {@link dev.delayedtasks.DelayedTaskScheduler} and
 * {@link dev.delayedtasks.DeadLetters}.
 */
@NullMarked
package dev.delayedtasks.store;

import org.jspecify.annotations.NullMarked;
