/**
 * How the Lua scripts reach Redis: the script files and their loader (which inlines the
 * shared includes/), the Redis Functions library, the EVALSHA and FCALL calls on blocking
 * and reactive connections, the replies as Redis sent them, and the commands every master
 * must answer (version, ACL refusals).
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.store.script;

import org.jspecify.annotations.NullMarked;
