/**
 * The Redis store: the key layout, the Lua scripts (one atomic operation each, as
 * {@code .lua} resources beside this package, sharing code through the {@code includes/}
 * that {@code ScriptLoader} inlines) and the Java calls to them. The fields of the task
 * and {@code meta} hashes are listed in docs/scheduling.md ("How it is stored").
 * <p>
 * <strong>Internal.</strong> Every type here is public only because the
 * auto-configuration and the worker, in other packages, create or call it; none is
 * application API, and any may change in any release. Applications use
 * {@link dev.delayedtasks.DelayedTaskScheduler}, {@link dev.delayedtasks.DeadLetters} and
 * {@link dev.delayedtasks.QueueControl}, which beans of this package implement.
 */
@NullMarked
package dev.delayedtasks.store;

import org.jspecify.annotations.NullMarked;
