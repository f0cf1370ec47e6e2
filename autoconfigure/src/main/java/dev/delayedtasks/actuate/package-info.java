/**
 * What operators see: queue snapshots refreshed in the background, Micrometer metrics,
 * the {@code delayedtasks} Actuator endpoint and the {@code delayedTasks} health
 * indicator.
 */
@NullMarked
package dev.delayedtasks.actuate;

import org.jspecify.annotations.NullMarked;
