/**
 * The worker runtime: per queue a dispatcher that claims tasks, the timer that promotes
 * them at their due instant, lease heartbeats, failure routing and the registry that
 * starts and stops handlers. Internal except for
 * {@link dev.delayedtasks.worker.DelayedTaskHandlerRegistry}.
 */
@NullMarked
package dev.delayedtasks.worker;

import org.jspecify.annotations.NullMarked;
