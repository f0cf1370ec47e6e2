package dev.delayedtasks.sample;

import java.math.BigDecimal;

import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.annotation.DelayedTaskHandler;

import org.springframework.stereotype.Component;

/**
 * Computes price quotes: a short task whose return value is its result, which
 * {@link QuoteController} waits for.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class QuoteHandler {

	private static final BigDecimal UNIT_PRICE = new BigDecimal("2.50");

	@DelayedTaskHandler(queue = "quotes", concurrency = "4")
	Quote quote(QuoteRequest request) throws InterruptedException {
		if (request.quantity() < 1) {
			throw new NonRetryableTaskException("A quote needs a quantity of at least 1, not " + request.quantity());
		}
		// Stands for a call to a pricing service.
		Thread.sleep(50);
		return new Quote(request.product(), request.quantity(),
				UNIT_PRICE.multiply(BigDecimal.valueOf(request.quantity())));
	}

}
