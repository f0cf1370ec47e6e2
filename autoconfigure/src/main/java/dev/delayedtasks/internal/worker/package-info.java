/**
 * The worker runtime behind DelayedTaskHandlerRegistry: per queue a dispatcher that
 * claims tasks, the timer that promotes them at their due instant, the runner of handler
 * methods, lease heartbeats, completions, failure routing and the listeners.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.worker;

import org.jspecify.annotations.NullMarked;
