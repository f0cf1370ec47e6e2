/**
 * The start-up checks of the Redis servers the application talks to: version and Lua
 * sandbox fixes, the eviction policy, Cluster topology refresh and credentials.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.server;

import org.jspecify.annotations.NullMarked;
