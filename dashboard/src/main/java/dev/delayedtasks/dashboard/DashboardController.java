package dev.delayedtasks.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import dev.delayedtasks.actuate.DelayedTasksEndpoint;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.TaskDescriptor;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.util.StreamUtils;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;

/**
 * The dashboard's page, its assets and its JSON API, below
 * {@code delayed-tasks.dashboard.path}. The page and the API use relative addresses
 * only, so the dashboard works below any context path and behind a proxy that adds a
 * prefix. Every request is checked against {@link DashboardAccess} (403 when refused);
 * every write is logged on {@code dev.delayedtasks.dashboard.audit} with the user, the
 * action, the queue and the task.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
@Controller
@RequestMapping("${delayed-tasks.dashboard.path:/delayed-tasks}")
public class DashboardController {

	private static final Logger audit = LoggerFactory.getLogger("dev.delayedtasks.dashboard.audit");

	private static final String ASSETS = "META-INF/delayed-tasks-dashboard/";

	private static final Map<String, MediaType> ASSET_TYPES = Map.of("dashboard.js",
			MediaType.parseMediaType("text/javascript;charset=UTF-8"), "dashboard.css",
			MediaType.parseMediaType("text/css;charset=UTF-8"), "favicon.svg", MediaType.parseMediaType("image/svg+xml"));

	private final DashboardReads reads;

	private final DelayedTasksEndpoint endpoint;

	private final DashboardAccess access;

	private final DashboardProperties properties;

	/**
	 * Create the controller.
	 * @param reads what the pages show
	 * @param endpoint the endpoint whose operations act on queues and tasks
	 * @param access who may read and write
	 * @param properties the settings
	 */
	public DashboardController(DashboardReads reads, DelayedTasksEndpoint endpoint, DashboardAccess access,
			DashboardProperties properties) {
		this.reads = reads;
		this.endpoint = endpoint;
		this.access = access;
		this.properties = properties;
	}

	@GetMapping("")
	ResponseEntity<Void> withoutSlash() {
		// Relative, so that the browser keeps the context path and any proxy prefix.
		String last = this.properties.path().substring(this.properties.path().lastIndexOf('/') + 1);
		return ResponseEntity.status(HttpStatus.FOUND).header(HttpHeaders.LOCATION, last + "/").build();
	}

	@GetMapping("/")
	ResponseEntity<String> page(HttpServletRequest request) throws IOException {
		checkRead(request);
		return ResponseEntity.ok()
			.contentType(MediaType.parseMediaType("text/html;charset=UTF-8"))
			.cacheControl(CacheControl.noStore())
			.body(asset("index.html"));
	}

	@GetMapping("/assets/{name:[a-z]+\\.(?:js|css|svg)}")
	ResponseEntity<String> asset(@PathVariable String name, HttpServletRequest request) throws IOException {
		checkRead(request);
		MediaType type = ASSET_TYPES.get(name);
		if (type == null) {
			return ResponseEntity.notFound().build();
		}
		return ResponseEntity.ok().contentType(type).cacheControl(CacheControl.noCache()).body(asset(name));
	}

	@GetMapping("/api/session")
	@ResponseBody
	SessionView session(HttpServletRequest request) {
		checkRead(request);
		return new SessionView(this.access.user(request), this.access.canWrite(request),
				this.properties.refreshInterval().toMillis(), this.access.csrf(request));
	}

	@GetMapping("/api/queues")
	@ResponseBody
	DashboardReads.Overview queues(HttpServletRequest request) {
		checkRead(request);
		return this.reads.overview();
	}

	@GetMapping("/api/queues/{queue}")
	ResponseEntity<DashboardReads.QueueDetail> queue(@PathVariable String queue, HttpServletRequest request) {
		checkRead(request);
		return found(this.reads.queue(queue));
	}

	@GetMapping("/api/queues/{queue}/scheduled")
	ResponseEntity<RedisQueueBrowser.Page> scheduled(@PathVariable String queue,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			HttpServletRequest request) {
		checkRead(request);
		return (this.reads.queue(queue) != null) ? ResponseEntity.ok(this.reads.scheduled(queue, offset, limit))
				: ResponseEntity.notFound().build();
	}

	@GetMapping("/api/queues/{queue}/running")
	ResponseEntity<RedisQueueBrowser.Page> running(@PathVariable String queue,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			HttpServletRequest request) {
		checkRead(request);
		return (this.reads.queue(queue) != null) ? ResponseEntity.ok(this.reads.running(queue, offset, limit))
				: ResponseEntity.notFound().build();
	}

	@GetMapping("/api/queues/{queue}/tasks/{taskId}")
	ResponseEntity<TaskDescriptor> task(@PathVariable String queue, @PathVariable String taskId,
			HttpServletRequest request) {
		checkRead(request);
		return found(this.reads.task(queue, taskId));
	}

	@PostMapping("/api/queues/{queue}/{action:pause|resume}")
	ResponseEntity<ActionDescriptor> queueAction(@PathVariable String queue, @PathVariable String action,
			HttpServletRequest request) {
		checkWrite(request);
		ActionDescriptor done = this.endpoint.queueAction(queue, action, null, null, null);
		this.reads.forgetOverview();
		audit(request, action, queue, null, done);
		return found(done);
	}

	@PostMapping("/api/queues/{queue}/tasks/{taskId}/{action:cancel|run|redrive}")
	ResponseEntity<ActionDescriptor> taskAction(@PathVariable String queue, @PathVariable String taskId,
			@PathVariable String action, HttpServletRequest request) {
		checkWrite(request);
		ActionDescriptor done = this.endpoint.taskAction(queue, taskId, action);
		this.reads.forgetOverview();
		audit(request, action, queue, taskId, done);
		return found(done);
	}

	@ExceptionHandler(InvalidEndpointRequestException.class)
	ResponseEntity<Map<String, String>> invalid(InvalidEndpointRequestException ex) {
		return ResponseEntity.badRequest().body(Map.of("message", ex.getReason()));
	}

	@ExceptionHandler(IllegalArgumentException.class)
	ResponseEntity<Map<String, String>> invalid(IllegalArgumentException ex) {
		return ResponseEntity.badRequest().body(Map.of("message", String.valueOf(ex.getMessage())));
	}

	@ExceptionHandler(AccessRefusedException.class)
	ResponseEntity<Map<String, String>> refused(AccessRefusedException ex) {
		return ResponseEntity.status(HttpStatus.FORBIDDEN).body(Map.of("message", ex.getMessage()));
	}

	private void checkRead(HttpServletRequest request) {
		if (!this.access.canRead(request)) {
			throw new AccessRefusedException("Reading the delayed-tasks dashboard needs the role "
					+ this.properties.readRole() + " or " + this.properties.writeRole());
		}
	}

	private void checkWrite(HttpServletRequest request) {
		if (!this.access.canWrite(request)) {
			throw new AccessRefusedException(
					"Acting through the delayed-tasks dashboard needs writes enabled and the role "
							+ this.properties.writeRole());
		}
	}

	private void audit(HttpServletRequest request, String action, String queue, @Nullable String taskId,
			@Nullable ActionDescriptor done) {
		audit.info("user={} action={} queue={} task={} affected={}", this.access.user(request), action, queue,
				(taskId != null) ? taskId : "-", (done != null) ? done.affected() : 0);
	}

	private static <T> ResponseEntity<T> found(@Nullable T body) {
		return (body != null) ? ResponseEntity.ok(body) : ResponseEntity.notFound().build();
	}

	private static String asset(String name) throws IOException {
		try (InputStream in = new ClassPathResource(ASSETS + name, DashboardController.class.getClassLoader())
			.getInputStream()) {
			return StreamUtils.copyToString(in, StandardCharsets.UTF_8);
		}
	}

	/**
	 * What the page needs to know about its user.
	 *
	 * @param user the user's name
	 * @param canWrite whether the page shows write controls
	 * @param refreshMillis how often the page refreshes
	 * @param csrf the token writes carry, or {@code null} without CSRF protection
	 */
	record SessionView(String user, boolean canWrite, long refreshMillis, DashboardAccess.@Nullable CsrfView csrf) {

	}

	/**
	 * A request its user may not make.
	 */
	static final class AccessRefusedException extends RuntimeException {

		AccessRefusedException(String message) {
			super(message);
		}

	}

}
