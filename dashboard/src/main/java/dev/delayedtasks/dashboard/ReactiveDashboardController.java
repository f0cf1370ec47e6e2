package dev.delayedtasks.dashboard;

import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringSchedulePage;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.TaskDescriptor;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.dao.DataAccessException;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.server.ServerWebExchange;

/**
 * The dashboard's page, its assets and its JSON API on WebFlux, below
 * {@code delayed-tasks.dashboard.path}: maps each request to {@link DashboardApi} with
 * its caller as {@link ReactiveDashboardAccess} sees it, as {@link DashboardController}
 * does on Spring MVC. {@link DashboardApi} reads Redis and blocks while it does, so each
 * route runs on a scheduler meant for blocking work, never on a thread of the server's
 * event loop.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
@Controller
@RequestMapping("${delayed-tasks.dashboard.path:/delayed-tasks}")
public class ReactiveDashboardController {

	private final DashboardApi api;

	private final ReactiveDashboardAccess access;

	private final Scheduler blocking;

	/**
	 * Create the controller.
	 * @param api the routes' bodies
	 * @param access who may read and write
	 * @param blocking where the routes run, such as
	 * {@link reactor.core.scheduler.Schedulers#boundedElastic()}
	 */
	public ReactiveDashboardController(DashboardApi api, ReactiveDashboardAccess access, Scheduler blocking) {
		this.api = api;
		this.access = access;
		this.blocking = blocking;
	}

	@GetMapping("")
	ResponseEntity<Void> withoutSlash() {
		return this.api.withoutSlash();
	}

	@GetMapping("/")
	Mono<ResponseEntity<String>> page(ServerWebExchange exchange) {
		return call(exchange, this.api::page);
	}

	@GetMapping("/assets/{name:[a-z]+\\.(?:js|css|svg)}")
	Mono<ResponseEntity<String>> asset(@PathVariable String name, ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.asset(caller, name));
	}

	@GetMapping("/api/session")
	@ResponseBody
	Mono<DashboardApi.SessionView> session(ServerWebExchange exchange) {
		// The token only when the caller may read: asking for it starts a session.
		return caller(exchange).flatMap((caller) -> (caller.canRead() ? this.access.csrf(exchange).map(Optional::of)
				: Mono.<Optional<DashboardCsrfToken>>empty())
			.defaultIfEmpty(Optional.empty())
			.map((csrf) -> this.api.session(caller, csrf.orElse(null))));
	}

	@GetMapping("/api/queues")
	@ResponseBody
	Mono<DashboardReads.Overview> queues(ServerWebExchange exchange) {
		return call(exchange, this.api::queues);
	}

	@GetMapping("/api/queue")
	Mono<ResponseEntity<DashboardReads.QueueDetail>> queue(@RequestParam String name, ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.queue(caller, name));
	}

	@GetMapping("/api/queue/charts")
	Mono<ResponseEntity<DashboardReads.Charts>> charts(@RequestParam String name, ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.charts(caller, name));
	}

	@GetMapping("/api/queue/scheduled")
	Mono<ResponseEntity<RedisQueueBrowser.Page>> scheduled(@RequestParam String name,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.scheduled(caller, name, offset, limit));
	}

	@GetMapping("/api/queue/ready")
	Mono<ResponseEntity<RedisQueueBrowser.ReadyPage>> ready(@RequestParam String name,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.ready(caller, name, offset, limit));
	}

	@GetMapping("/api/queue/running")
	Mono<ResponseEntity<DashboardTasks.RunningPage>> running(@RequestParam String name,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.running(caller, name, offset, limit));
	}

	@GetMapping("/api/task")
	Mono<ResponseEntity<TaskDescriptor>> task(@RequestParam String queue, @RequestParam String id,
			ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.task(caller, queue, id));
	}

	@GetMapping("/api/task/payload")
	Mono<ResponseEntity<DashboardApi.PayloadView>> payload(@RequestParam String queue, @RequestParam String id,
			ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.payload(caller, queue, id));
	}

	@GetMapping("/api/task/details")
	@ResponseBody
	Mono<DashboardTasks.TaskDetails> taskDetails(@RequestParam String queue, @RequestParam String id,
			ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.taskDetails(caller, queue, id));
	}

	@GetMapping("/api/instances")
	@ResponseBody
	Mono<RedisInstanceRegistry.Instances> instances(ServerWebExchange exchange) {
		return call(exchange, this.api::instances);
	}

	@GetMapping("/api/schedules")
	@ResponseBody
	Mono<RecurringSchedulePage> schedules(@RequestParam(required = false) @Nullable String after,
			@RequestParam(defaultValue = "50") int limit, ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.schedules(caller, after, limit));
	}

	@GetMapping("/api/schedule")
	Mono<ResponseEntity<RecurringScheduleInfo>> schedule(@RequestParam String id, ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.schedule(caller, id));
	}

	@PostMapping("/api/schedule/{action:pause|resume|trigger}")
	Mono<ResponseEntity<DashboardActions.ScheduleActionDescriptor>> scheduleAction(@PathVariable String action,
			@RequestParam String id, ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.scheduleAction(caller, action, id));
	}

	@PostMapping("/api/queue/{action:pause|resume}")
	Mono<ResponseEntity<ActionDescriptor>> queueAction(@PathVariable String action, @RequestParam String name,
			ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.queueAction(caller, action, name));
	}

	@PostMapping("/api/task/{action:cancel|run|redrive|delete}")
	Mono<ResponseEntity<ActionDescriptor>> taskAction(@PathVariable String action, @RequestParam String queue,
			@RequestParam String id, ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.taskAction(caller, action, queue, id));
	}

	@PostMapping("/api/task/reschedule")
	Mono<ResponseEntity<ActionDescriptor>> reschedule(@RequestParam String queue, @RequestParam String id,
			@RequestParam(required = false) @Nullable Long at, ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.reschedule(caller, queue, id, at));
	}

	@PostMapping("/api/task/redrive-edited")
	Mono<ResponseEntity<ActionDescriptor>> redriveEdited(@RequestParam String queue, @RequestParam String id,
			@RequestParam(required = false) @Nullable Long deadAt, @RequestBody String payload,
			ServerWebExchange exchange) {
		return call(exchange, (caller) -> this.api.redriveEdited(caller, queue, id, deadAt, payload));
	}

	@PostMapping("/api/dead-letters/{action:redrive|delete}")
	@ResponseBody
	Mono<DashboardActions.GroupStep> deadLetterGroup(@PathVariable String action, @RequestParam String queue,
			@RequestParam String reason, @RequestParam String exceptionType,
			@RequestParam(required = false) @Nullable Long from, @RequestParam(defaultValue = "0") long skip,
			ServerWebExchange exchange) {
		return call(exchange,
				(caller) -> this.api.deadLetterGroup(caller, action, queue, reason, exceptionType, from, skip));
	}

	@ExceptionHandler({ InvalidEndpointRequestException.class, IllegalArgumentException.class,
			InvalidTaskRequestException.class, DashboardActions.RefusedActionException.class,
			DashboardApi.AccessRefusedException.class, DataAccessException.class, TaskStoreException.class })
	ResponseEntity<Map<String, String>> failed(RuntimeException ex) {
		return this.api.failed(ex);
	}

	// The route reads Redis, or the class path, and blocks while it does.
	private <T> Mono<T> call(ServerWebExchange exchange, Function<DashboardCaller, T> route) {
		return caller(exchange)
			.flatMap((caller) -> Mono.fromCallable(() -> route.apply(caller)).subscribeOn(this.blocking));
	}

	private Mono<DashboardCaller> caller(ServerWebExchange exchange) {
		boolean writeHeader = exchange.getRequest().getHeaders().getFirst(DashboardApi.WRITE_HEADER) != null;
		return Mono
			.zip(this.access.user(exchange).defaultIfEmpty("anonymous"),
					this.access.canRead(exchange).defaultIfEmpty(false),
					this.access.canWrite(exchange).defaultIfEmpty(false))
			.map((user) -> new DashboardCaller(user.getT1(), user.getT2(), user.getT3(), writeHeader));
	}

}
