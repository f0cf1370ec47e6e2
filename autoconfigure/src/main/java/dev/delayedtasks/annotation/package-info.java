/**
 * The {@link dev.delayedtasks.annotation.DelayedTaskHandler} annotation and the
 * post-processor that finds it.
 */
@NullMarked
package dev.delayedtasks.annotation;

import org.jspecify.annotations.NullMarked;
