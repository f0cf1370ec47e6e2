/**
 * The delayed-tasks sample application.
 */
@NullMarked
package dev.delayedtasks.sample;

import org.jspecify.annotations.NullMarked;
