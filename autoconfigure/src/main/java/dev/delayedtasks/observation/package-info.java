/**
 * Micrometer observations of delayed tasks: one around each handler run, continuing the
 * trace of the code that scheduled the task, and one around scheduling, whose trace
 * context travels in the task's headers.
 */
@NullMarked
package dev.delayedtasks.observation;

import org.jspecify.annotations.NullMarked;
