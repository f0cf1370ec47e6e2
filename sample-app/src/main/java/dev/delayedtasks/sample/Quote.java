package dev.delayedtasks.sample;

import java.math.BigDecimal;

/**
 * A price quote: the result of a task of the {@code quotes} queue.
 *
 * @param product what is quoted
 * @param quantity how many
 * @param total the price of all of them
 * @author delayed-tasks
 * @since 0.1.0
 */
public record Quote(String product, int quantity, BigDecimal total) {
}
