/**
 * What operators see: the {@code delayedtasks} Actuator endpoint, the
 * {@code delayedTasks} health indicator and Micrometer metrics, all reading queue
 * snapshots refreshed in the background.
 * <p>
 * The endpoint, its web extension, the health indicator and the metrics are public so
 * that an application can replace their beans; their constructors are internal.
 * {@link dev.delayedtasks.internal.actuate.QueueSnapshots},
 * {@link dev.delayedtasks.internal.actuate.ReportedQueues},
 * {@link dev.delayedtasks.internal.actuate.BoundedQueueTags} and
 * {@link dev.delayedtasks.internal.actuate.CorruptDataReporter} are internal.
 */
@NullMarked
package dev.delayedtasks.actuate;

import org.jspecify.annotations.NullMarked;
