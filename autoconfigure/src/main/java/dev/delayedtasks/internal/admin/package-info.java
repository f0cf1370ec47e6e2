/**
 * Queue administration on Redis: pause, resume and removal of queues (QueueControl), dead
 * letters listed, redriven and purged (DeadLetters), and the retention pass that keeps
 * dead letters within their limits.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.admin;

import org.jspecify.annotations.NullMarked;
