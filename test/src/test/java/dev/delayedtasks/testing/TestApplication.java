package dev.delayedtasks.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * The application these tests test: handlers that record what they ran, and one that
 * always fails.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(TestApplication.Handlers.class)
class TestApplication {

	static class Handlers {

		private final List<String> sent = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "emails", concurrency = "2")
		void send(String email, TaskContext context) {
			this.sent.add(email);
		}

		@DelayedTaskHandler(queue = "invoices")
		void invoice(String invoice) {
			throw new IllegalStateException("Billing is down for " + invoice);
		}

		private final Semaphore slowRuns = new Semaphore(0);

		@DelayedTaskHandler(queue = "slow", concurrency = "2")
		void slow(String name) throws InterruptedException {
			if (!this.slowRuns.tryAcquire(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Not released: " + name);
			}
		}

		void releaseSlowRun() {
			this.slowRuns.release();
		}

		List<String> sent() {
			return List.copyOf(this.sent);
		}

	}

}
