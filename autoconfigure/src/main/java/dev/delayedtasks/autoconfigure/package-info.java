/**
 * Spring Boot auto-configuration of delayed tasks and its {@code delayed-tasks.*}
 * properties.
 */
@NullMarked
package dev.delayedtasks.autoconfigure;

import org.jspecify.annotations.NullMarked;
