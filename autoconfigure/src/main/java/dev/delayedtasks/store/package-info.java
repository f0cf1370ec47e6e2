/**
 * The Redis store: the key layout, the Lua scripts (one atomic operation each, as
 * {@code .lua} resources beside this package, sharing code through the {@code includes/}
 * that {@code ScriptLoader} inlines) and the Java calls to them. The fields of the task
 * and {@code meta} hashes are listed in the README ("How it is stored"). Internal:
 * applications use {@link dev.delayedtasks.DelayedTaskScheduler} and
 * {@link dev.delayedtasks.DeadLetters}.
 */
@NullMarked
package dev.delayedtasks.store;

import org.jspecify.annotations.NullMarked;
