/**
 * Real Redis servers for tests, the sample application and benchmarks: found through a
 * URL, Testcontainers, a {@code redis-server} on the {@code PATH} or the Redis 6.2 binary
 * shipped in a Maven artifact.
 */
@NullMarked
package dev.delayedtasks.test;

import org.jspecify.annotations.NullMarked;
