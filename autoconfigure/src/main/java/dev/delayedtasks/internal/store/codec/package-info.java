/**
 * The payload codec: how a payload and its headers become the stored JSON envelope and
 * back, with the limits a caller's envelope must keep and the Jackson failures described
 * by their structure, never by their message.
 * <p>
 * <strong>Internal.</strong> Not application API: any type here may change in any
 * release.
 */
@NullMarked
package dev.delayedtasks.internal.store.codec;

import org.jspecify.annotations.NullMarked;
