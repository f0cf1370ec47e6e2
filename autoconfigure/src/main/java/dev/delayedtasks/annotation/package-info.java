/**
 * The {@link dev.delayedtasks.annotation.DelayedTaskHandler} annotation, application API,
 * and the post-processor that finds it, which is internal.
 */
@NullMarked
package dev.delayedtasks.annotation;

import org.jspecify.annotations.NullMarked;
