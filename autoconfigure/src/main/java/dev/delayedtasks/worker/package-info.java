/**
 * What applications use to start, stop and inspect handlers:
 * {@link dev.delayedtasks.worker.DelayedTaskHandlerRegistry} and
 * {@link dev.delayedtasks.worker.HandlerContainer}. The worker runtime behind them lives
 * in {@code dev.delayedtasks.internal.worker}.
 */
@NullMarked
package dev.delayedtasks.worker;

import org.jspecify.annotations.NullMarked;
