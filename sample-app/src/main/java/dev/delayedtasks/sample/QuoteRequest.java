package dev.delayedtasks.sample;

/**
 * A request for a price quote: the payload of the {@code quotes} queue.
 *
 * @param product what is quoted
 * @param quantity how many
 * @author delayed-tasks
 * @since 0.1.0
 */
public record QuoteRequest(String product, int quantity) {
}
