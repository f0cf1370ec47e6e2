/**
 * The delayed-tasks dashboard: a page inside a Spring MVC or WebFlux application for its
 * queues, tasks and dead letters, secured by the application's Spring Security.
 */
@NullMarked
package dev.delayedtasks.dashboard;

import org.jspecify.annotations.NullMarked;
