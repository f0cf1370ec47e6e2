/**
 * Testing applications that use delayed-tasks: {@link AutoConfigureDelayedTasks} gives a
 * Spring test context a Redis and a key prefix of its own, and {@link DelayedTasksTester}
 * waits for tasks, records their runs and moves the queues' clocks forward.
 */
@NullMarked
package dev.delayedtasks.testing;

import org.jspecify.annotations.NullMarked;
