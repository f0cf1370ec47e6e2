package dev.delayedtasks.internal.store;

import java.util.List;

import dev.delayedtasks.DeadLetter;

/**
 * The newest dead letters of a queue, and how many members of its dead set were passed
 * over because they are not task ids (bad data in Redis).
 *
 * @param letters the dead letters, newest first
 * @param unreadable how many members were passed over while collecting them
 * @author delayed-tasks
 * @since 0.1.0
 */
public record DeadLetterListing(List<DeadLetter> letters, int unreadable) {

}
