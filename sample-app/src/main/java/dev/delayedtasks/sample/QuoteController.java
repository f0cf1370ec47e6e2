package dev.delayedtasks.sample;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * An HTTP request that waits for a short task: {@code POST /quotes} schedules a tracked
 * task on the {@code quotes} queue and answers with its result when it ends within
 * {@value #WAIT_SECONDS} seconds, else {@code 202 Accepted} with the task's address;
 * {@code GET /quotes/{id}} reads the kept outcome from any instance.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@RestController
class QuoteController {

	static final int WAIT_SECONDS = 5;

	private final DelayedTaskScheduler scheduler;

	QuoteController(DelayedTaskScheduler scheduler) {
		this.scheduler = scheduler;
	}

	@PostMapping("/quotes")
	ResponseEntity<?> quote(@RequestBody QuoteRequest request) {
		TrackedTask tracked = this.scheduler.track(TaskRequest.of("quotes", request));
		Optional<TaskOutcome> outcome = tracked.await(Duration.ofSeconds(WAIT_SECONDS));
		if (outcome.isEmpty()) {
			return ResponseEntity.accepted()
				.location(URI.create("/quotes/" + tracked.id().value()))
				.body(Map.of("id", tracked.id().value(), "status", "running"));
		}
		return answer(outcome.get());
	}

	@GetMapping("/quotes/{id}")
	ResponseEntity<?> find(@PathVariable String id) {
		TaskId taskId = TaskId.of(id);
		Optional<TaskOutcome> outcome = this.scheduler.outcome("quotes", taskId);
		if (outcome.isPresent()) {
			return answer(outcome.get());
		}
		return this.scheduler.find("quotes", taskId)
			.<ResponseEntity<?>>map((task) -> ResponseEntity.accepted().body(Map.of("id", id, "status", "running")))
			.orElseGet(() -> ResponseEntity.notFound().build());
	}

	@ExceptionHandler(InvalidTaskRequestException.class)
	ResponseEntity<Map<String, String>> invalid(InvalidTaskRequestException ex) {
		return ResponseEntity.badRequest().body(Map.of("message", ex.getMessage()));
	}

	private static ResponseEntity<?> answer(TaskOutcome outcome) {
		if (outcome.succeeded()) {
			return ResponseEntity.ok(outcome.result(Quote.class).orElseThrow());
		}
		return ResponseEntity.status(HttpStatus.UNPROCESSABLE_ENTITY)
			.body(Map.of("id", outcome.id().value(), "status", outcome.kind().name(), "reason",
					outcome.reason().orElse(""), "message", outcome.message().orElse("")));
	}

}
