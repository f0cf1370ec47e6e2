package dev.delayedtasks.dashboard;

import java.util.Map;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringSchedulePage;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.TaskDescriptor;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

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

/**
 * The dashboard's page, its assets and its JSON API on Spring MVC, below
 * {@code delayed-tasks.dashboard.path}: maps each request to {@link DashboardApi} with
 * its caller as {@link DashboardAccess} sees it. Queue names and task ids travel as query
 * parameters, never as path segments, so that an id such as {@code ..} reaches the API as
 * it is. The page and the API use relative addresses only, so the dashboard works below
 * any context path and behind a proxy that adds a prefix.
 *
 * @author delayed-tasks
 * @since 0.3.0
 * @see ReactiveDashboardController
 */
@Controller
@RequestMapping("${delayed-tasks.dashboard.path:/delayed-tasks}")
public class DashboardController {

	/**
	 * The header every write carries: a page of another site cannot set it on a form
	 * post, and a script of another site cannot send it without a CORS permission.
	 */
	public static final String WRITE_HEADER = DashboardApi.WRITE_HEADER;

	private final DashboardApi api;

	private final DashboardAccess access;

	/**
	 * Create the controller.
	 * @param api the routes' bodies
	 * @param access who may read and write
	 */
	public DashboardController(DashboardApi api, DashboardAccess access) {
		this.api = api;
		this.access = access;
	}

	@GetMapping("")
	ResponseEntity<Void> withoutSlash() {
		return this.api.withoutSlash();
	}

	@GetMapping("/")
	ResponseEntity<String> page(HttpServletRequest request) {
		return this.api.page(caller(request));
	}

	@GetMapping("/assets/{name:[a-z]+\\.(?:js|css|svg)}")
	ResponseEntity<String> asset(@PathVariable String name, HttpServletRequest request) {
		return this.api.asset(caller(request), name);
	}

	@GetMapping("/api/session")
	@ResponseBody
	DashboardApi.SessionView session(HttpServletRequest request) {
		DashboardCaller caller = caller(request);
		// The token only when the caller may read: asking for it may start an HTTP
		// session.
		return this.api.session(caller, caller.canRead() ? this.access.csrf(request) : null);
	}

	@GetMapping("/api/queues")
	@ResponseBody
	DashboardReads.Overview queues(HttpServletRequest request) {
		return this.api.queues(caller(request));
	}

	@GetMapping("/api/queue")
	ResponseEntity<DashboardReads.QueueDetail> queue(@RequestParam String name, HttpServletRequest request) {
		return this.api.queue(caller(request), name);
	}

	@GetMapping("/api/queue/charts")
	ResponseEntity<DashboardReads.Charts> charts(@RequestParam String name, HttpServletRequest request) {
		return this.api.charts(caller(request), name);
	}

	@GetMapping("/api/queue/scheduled")
	ResponseEntity<RedisQueueBrowser.Page> scheduled(@RequestParam String name,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			HttpServletRequest request) {
		return this.api.scheduled(caller(request), name, offset, limit);
	}

	@GetMapping("/api/queue/ready")
	ResponseEntity<RedisQueueBrowser.ReadyPage> ready(@RequestParam String name,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			HttpServletRequest request) {
		return this.api.ready(caller(request), name, offset, limit);
	}

	@GetMapping("/api/queue/running")
	ResponseEntity<DashboardTasks.RunningPage> running(@RequestParam String name,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			HttpServletRequest request) {
		return this.api.running(caller(request), name, offset, limit);
	}

	@GetMapping("/api/task")
	ResponseEntity<TaskDescriptor> task(@RequestParam String queue, @RequestParam String id,
			HttpServletRequest request) {
		return this.api.task(caller(request), queue, id);
	}

	@GetMapping("/api/task/payload")
	ResponseEntity<DashboardApi.PayloadView> payload(@RequestParam String queue, @RequestParam String id,
			HttpServletRequest request) {
		return this.api.payload(caller(request), queue, id);
	}

	@GetMapping("/api/task/details")
	@ResponseBody
	DashboardTasks.TaskDetails taskDetails(@RequestParam String queue, @RequestParam String id,
			HttpServletRequest request) {
		return this.api.taskDetails(caller(request), queue, id);
	}

	@GetMapping("/api/instances")
	@ResponseBody
	RedisInstanceRegistry.Instances instances(HttpServletRequest request) {
		return this.api.instances(caller(request));
	}

	@GetMapping("/api/schedules")
	@ResponseBody
	RecurringSchedulePage schedules(@RequestParam(required = false) @Nullable String after,
			@RequestParam(defaultValue = "50") int limit, HttpServletRequest request) {
		return this.api.schedules(caller(request), after, limit);
	}

	@GetMapping("/api/schedule")
	ResponseEntity<RecurringScheduleInfo> schedule(@RequestParam String id, HttpServletRequest request) {
		return this.api.schedule(caller(request), id);
	}

	@PostMapping("/api/schedule/{action:pause|resume|trigger}")
	ResponseEntity<DashboardActions.ScheduleActionDescriptor> scheduleAction(@PathVariable String action,
			@RequestParam String id, HttpServletRequest request) {
		return this.api.scheduleAction(caller(request), action, id);
	}

	@PostMapping("/api/queue/{action:pause|resume}")
	ResponseEntity<ActionDescriptor> queueAction(@PathVariable String action, @RequestParam String name,
			HttpServletRequest request) {
		return this.api.queueAction(caller(request), action, name);
	}

	@PostMapping("/api/task/{action:cancel|run|redrive|delete}")
	ResponseEntity<ActionDescriptor> taskAction(@PathVariable String action, @RequestParam String queue,
			@RequestParam String id, HttpServletRequest request) {
		return this.api.taskAction(caller(request), action, queue, id);
	}

	@PostMapping("/api/task/reschedule")
	ResponseEntity<ActionDescriptor> reschedule(@RequestParam String queue, @RequestParam String id,
			@RequestParam(required = false) @Nullable Long at, HttpServletRequest request) {
		return this.api.reschedule(caller(request), queue, id, at);
	}

	@PostMapping("/api/task/redrive-edited")
	ResponseEntity<ActionDescriptor> redriveEdited(@RequestParam String queue, @RequestParam String id,
			@RequestParam(required = false) @Nullable Long deadAt, @RequestBody String payload,
			HttpServletRequest request) {
		return this.api.redriveEdited(caller(request), queue, id, deadAt, payload);
	}

	@PostMapping("/api/dead-letters/{action:redrive|delete}")
	@ResponseBody
	DashboardActions.GroupStep deadLetterGroup(@PathVariable String action, @RequestParam String queue,
			@RequestParam String reason, @RequestParam String exceptionType,
			@RequestParam(required = false) @Nullable Long from, @RequestParam(defaultValue = "0") long skip,
			HttpServletRequest request) {
		return this.api.deadLetterGroup(caller(request), action, queue, reason, exceptionType, from, skip);
	}

	@ExceptionHandler({ InvalidEndpointRequestException.class, IllegalArgumentException.class,
			InvalidTaskRequestException.class, DashboardActions.RefusedActionException.class,
			DashboardApi.AccessRefusedException.class, DataAccessException.class, TaskStoreException.class })
	ResponseEntity<Map<String, String>> failed(RuntimeException ex) {
		return this.api.failed(ex);
	}

	private DashboardCaller caller(HttpServletRequest request) {
		return new DashboardCaller(this.access.user(request), this.access.canRead(request),
				this.access.canWrite(request), request.getHeader(WRITE_HEADER) != null);
	}

}
