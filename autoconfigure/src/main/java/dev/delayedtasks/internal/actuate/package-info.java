/**
 * What the Actuator endpoint, health and metrics read: queue snapshots refreshed in the
 * background, the queues reported, bounded metric tags and the reporting of corrupt data.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.actuate;

import org.jspecify.annotations.NullMarked;
