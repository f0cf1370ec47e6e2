/**
 * The {@link dev.delayedtasks.annotation.DelayedTaskHandler} and
 * {@link dev.delayedtasks.annotation.Recurring} annotations. The post-processors that
 * find them live in {@code dev.delayedtasks.internal.annotation}.
 */
@NullMarked
package dev.delayedtasks.annotation;

import org.jspecify.annotations.NullMarked;
