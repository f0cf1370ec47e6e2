/**
 * The {@link dev.delayedtasks.annotation.DelayedTaskHandler} and
 * {@link dev.delayedtasks.annotation.Recurring} annotations, application API, and the
 * post-processors that find them, which are internal.
 */
@NullMarked
package dev.delayedtasks.annotation;

import org.jspecify.annotations.NullMarked;
