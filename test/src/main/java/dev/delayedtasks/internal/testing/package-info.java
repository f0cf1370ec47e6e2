/**
 * <strong>Internal.</strong> The test auto-configurations behind
 * {@code @AutoConfigureDelayedTasks}, the shared test Redis, the per-context key prefix
 * and the run history. May change in any release.
 */
@NullMarked
package dev.delayedtasks.internal.testing;

import org.jspecify.annotations.NullMarked;
