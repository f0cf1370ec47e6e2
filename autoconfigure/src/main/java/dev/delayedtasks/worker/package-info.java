/**
 * The worker runtime: per queue a dispatcher that claims tasks, the timer that promotes
 * them at their due instant, lease heartbeats, failure routing, and the registry that
 * starts and stops handlers.
 * <p>
 * <strong>Internal</strong>, except for
 * {@link dev.delayedtasks.worker.DelayedTaskHandlerRegistry} and
 * {@link dev.delayedtasks.worker.HandlerContainer}, through which applications start,
 * stop and inspect handlers. The other public types are public only because the
 * auto-configuration and the annotation post-processor, in other packages, create them;
 * any may change in any release.
 */
@NullMarked
package dev.delayedtasks.worker;

import org.jspecify.annotations.NullMarked;
