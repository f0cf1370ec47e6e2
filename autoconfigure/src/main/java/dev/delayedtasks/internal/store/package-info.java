/**
 * The Redis contract of a queue partition: the key layout and its version, the index of
 * known queues, the task operations of workers and the timer (each one call of one Lua
 * script), the enqueue call, the records a task leaves (state, error, stack trace) and
 * the statistics script. The fields of the task and meta hashes are listed in
 * docs/scheduling.md ("How it is stored"). Depends on no other runtime package but the
 * API's value types.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.store;

import org.jspecify.annotations.NullMarked;
