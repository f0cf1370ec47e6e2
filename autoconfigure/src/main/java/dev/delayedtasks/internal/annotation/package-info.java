/**
 * The bean post-processors that find DelayedTaskHandler and Recurring methods and hand
 * them over to the handler registry and the recurring registrar once singletons are
 * created.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.annotation;

import org.jspecify.annotations.NullMarked;
