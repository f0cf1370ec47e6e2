/**
 * The producer: the DelayedTaskScheduler on Redis with its blocking, asynchronous and
 * reactive paths, the batching of scheduleAll, the group commit of concurrent callers,
 * the outage buffer of the asynchronous paths, after-commit sends, schedule observations
 * and the warm start.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.producer;

import org.jspecify.annotations.NullMarked;
