/**
 * Completion tracking: the outcome records that ending scripts write, and the tracker
 * that completes this process's futures when any instance ends a tracked task.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.tracking;

import org.jspecify.annotations.NullMarked;
