package dev.delayedtasks.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringSchedulePage;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.TaskDescriptor;
import dev.delayedtasks.internal.admin.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.core.io.ClassPathResource;
import org.springframework.dao.DataAccessException;
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
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;

/**
 * The dashboard's page, its assets and its JSON API, below
 * {@code delayed-tasks.dashboard.path}. Queue names and task ids travel as query
 * parameters, never as path segments, so that an id such as {@code ..} reaches the API as
 * it is. The page and the API use relative addresses only, so the dashboard works below
 * any context path and behind a proxy that adds a prefix. Every request is checked
 * against {@link DashboardAccess} (403 when refused), and every write must carry the
 * header {@value #WRITE_HEADER}, which a form on another site cannot send. Redis not
 * answering is a 503 with the reason, never a stack trace.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
@Controller
@RequestMapping("${delayed-tasks.dashboard.path:/delayed-tasks}")
public class DashboardController {

	/**
	 * The header every write carries: a page of another site cannot set it on a form
	 * post, and a script of another site cannot send it without a CORS permission.
	 */
	public static final String WRITE_HEADER = "X-Delayed-Tasks-Dashboard";

	private static final Logger logger = LoggerFactory.getLogger(DashboardController.class);

	private static final String ASSETS = "META-INF/delayed-tasks-dashboard/";

	private static final Map<String, MediaType> ASSET_TYPES = Map.of("dashboard.js",
			MediaType.parseMediaType("text/javascript;charset=UTF-8"), "dashboard.css",
			MediaType.parseMediaType("text/css;charset=UTF-8"), "favicon.svg",
			MediaType.parseMediaType("image/svg+xml"));

	private final DashboardReads reads;

	private final DashboardSchedules schedules;

	private final DashboardInstances instances;

	private final DashboardActions actions;

	private final DashboardAccess access;

	private final DashboardProperties properties;

	private final JsonMapper mapper;

	/**
	 * Create the controller.
	 * @param reads what the pages show
	 * @param schedules the recurring schedules the pages show
	 * @param instances the instances the pages show
	 * @param actions what users do
	 * @param access who may read and write
	 * @param properties the settings
	 * @param mapper reads edited payloads
	 */
	public DashboardController(DashboardReads reads, DashboardSchedules schedules, DashboardInstances instances,
			DashboardActions actions, DashboardAccess access, DashboardProperties properties, JsonMapper mapper) {
		this.reads = reads;
		this.schedules = schedules;
		this.instances = instances;
		this.actions = actions;
		this.access = access;
		this.properties = properties;
		this.mapper = mapper;
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
		return new SessionView(this.access.user(request), this.access.canWrite(request), this.properties.showPayloads(),
				this.properties.refreshInterval().toMillis(), WRITE_HEADER, this.access.csrf(request));
	}

	@GetMapping("/api/queues")
	@ResponseBody
	DashboardReads.Overview queues(HttpServletRequest request) {
		checkRead(request);
		return this.reads.overview();
	}

	@GetMapping("/api/queue")
	ResponseEntity<DashboardReads.QueueDetail> queue(@RequestParam String name, HttpServletRequest request) {
		checkRead(request);
		return found(this.reads.queue(name));
	}

	@GetMapping("/api/queue/charts")
	ResponseEntity<DashboardReads.Charts> charts(@RequestParam String name, HttpServletRequest request) {
		checkRead(request);
		return found(this.reads.charts(name));
	}

	@GetMapping("/api/queue/{list:scheduled|running}")
	ResponseEntity<RedisQueueBrowser.Page> tasks(@PathVariable String list, @RequestParam String name,
			@RequestParam(defaultValue = "0") long offset, @RequestParam(defaultValue = "20") int limit,
			HttpServletRequest request) {
		checkRead(request);
		if (!this.reads.knows(name)) {
			return ResponseEntity.notFound().build();
		}
		return ResponseEntity.ok(list.equals("scheduled") ? this.reads.scheduled(name, offset, limit)
				: this.reads.running(name, offset, limit));
	}

	@GetMapping("/api/task")
	ResponseEntity<TaskDescriptor> task(@RequestParam String queue, @RequestParam String id,
			HttpServletRequest request) {
		checkRead(request);
		return found(this.reads.task(queue, id));
	}

	@GetMapping("/api/task/payload")
	ResponseEntity<PayloadView> payload(@RequestParam String queue, @RequestParam String id,
			HttpServletRequest request) {
		checkRead(request);
		checkPayloadsShown();
		String payload = this.reads.payload(queue, id);
		return (payload != null) ? ResponseEntity.ok(new PayloadView(payload, this.reads.deadAt(queue, id)))
				: ResponseEntity.notFound().build();
	}

	@GetMapping("/api/instances")
	@ResponseBody
	RedisInstanceRegistry.Instances instances(HttpServletRequest request) {
		checkRead(request);
		return this.instances.alive();
	}

	@GetMapping("/api/schedules")
	@ResponseBody
	RecurringSchedulePage schedules(@RequestParam(required = false) @Nullable String after,
			@RequestParam(defaultValue = "50") int limit, HttpServletRequest request) {
		checkRead(request);
		return this.schedules.page(after, limit);
	}

	@GetMapping("/api/schedule")
	ResponseEntity<RecurringScheduleInfo> schedule(@RequestParam String id, HttpServletRequest request) {
		checkRead(request);
		return ResponseEntity.of(this.schedules.schedule(id));
	}

	@PostMapping("/api/schedule/{action:pause|resume|trigger}")
	ResponseEntity<DashboardActions.ScheduleActionDescriptor> scheduleAction(@PathVariable String action,
			@RequestParam String id, HttpServletRequest request) {
		checkWrite(request);
		return found(this.actions.scheduleAction(this.access.user(request), id, action));
	}

	@PostMapping("/api/queue/{action:pause|resume}")
	ResponseEntity<ActionDescriptor> queueAction(@PathVariable String action, @RequestParam String name,
			HttpServletRequest request) {
		checkWrite(request);
		return found(this.actions.queueAction(this.access.user(request), name, action));
	}

	@PostMapping("/api/task/{action:cancel|run|redrive|delete}")
	ResponseEntity<ActionDescriptor> taskAction(@PathVariable String action, @RequestParam String queue,
			@RequestParam String id, HttpServletRequest request) {
		checkWrite(request);
		return found(this.actions.taskAction(this.access.user(request), queue, id, action));
	}

	@PostMapping("/api/task/redrive-edited")
	ResponseEntity<ActionDescriptor> redriveEdited(@RequestParam String queue, @RequestParam String id,
			@RequestParam(required = false) @Nullable Long deadAt, @RequestBody String payload,
			HttpServletRequest request) {
		checkWrite(request);
		checkPayloadsShown();
		if (deadAt == null) {
			throw new IllegalArgumentException("An edited payload names the dead letter it edits: its deadAt "
					+ "(epoch milliseconds), as the payload view gave it");
		}
		JsonNode tree;
		try {
			tree = this.mapper.readTree(payload);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("The edited payload is not JSON: " + ex.getOriginalMessage());
		}
		return found(this.actions.redriveWithPayload(this.access.user(request), queue, id, Instant.ofEpochMilli(deadAt),
				tree));
	}

	@PostMapping("/api/dead-letters/{action:redrive|delete}")
	@ResponseBody
	DashboardActions.GroupStep deadLetterGroup(@PathVariable String action, @RequestParam String queue,
			@RequestParam String reason, @RequestParam String exceptionType,
			@RequestParam(required = false) @Nullable Long from, @RequestParam(defaultValue = "0") long skip,
			HttpServletRequest request) {
		checkWrite(request);
		if (!this.reads.knows(queue)) {
			throw new IllegalArgumentException("No queue '" + queue + "'");
		}
		return this.actions.groupStep(this.access.user(request), queue, action, reason, exceptionType, from, skip);
	}

	@ExceptionHandler(InvalidEndpointRequestException.class)
	ResponseEntity<Map<String, String>> invalid(InvalidEndpointRequestException ex) {
		return ResponseEntity.badRequest().body(Map.of("message", ex.getReason()));
	}

	@ExceptionHandler({ IllegalArgumentException.class, InvalidTaskRequestException.class })
	ResponseEntity<Map<String, String>> invalid(RuntimeException ex) {
		return ResponseEntity.badRequest().body(Map.of("message", String.valueOf(ex.getMessage())));
	}

	// A paused schedule cannot be triggered: the request is valid, the state refuses it.
	@ExceptionHandler(DashboardActions.RefusedActionException.class)
	ResponseEntity<Map<String, String>> conflict(DashboardActions.RefusedActionException ex) {
		return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("message", String.valueOf(ex.getMessage())));
	}

	@ExceptionHandler(AccessRefusedException.class)
	ResponseEntity<Map<String, String>> refused(AccessRefusedException ex) {
		return ResponseEntity.status(HttpStatus.FORBIDDEN).body(Map.of("message", ex.getMessage()));
	}

	@ExceptionHandler({ DataAccessException.class, TaskStoreException.class })
	ResponseEntity<Map<String, String>> redisAway(RuntimeException ex) {
		logger.warn("The delayed-tasks dashboard could not reach Redis: {}", ex.getMessage());
		return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
			.body(Map.of("message", "Redis did not answer; try again shortly (" + ex.getClass().getSimpleName() + ")"));
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
		if (request.getHeader(WRITE_HEADER) == null) {
			throw new AccessRefusedException("A write through the delayed-tasks dashboard must carry the header "
					+ WRITE_HEADER + ", as its page sends it");
		}
	}

	private void checkPayloadsShown() {
		if (!this.properties.showPayloads()) {
			throw new AccessRefusedException(
					"Payloads are not shown: set delayed-tasks.dashboard.show-payloads=true to see and edit them");
		}
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
	 * @param showPayloads whether the page shows (and may edit) payloads
	 * @param refreshMillis how often the page refreshes
	 * @param writeHeader the header writes carry
	 * @param csrf the token writes carry, or {@code null} without CSRF protection
	 */
	record SessionView(String user, boolean canWrite, boolean showPayloads, long refreshMillis, String writeHeader,
			DashboardAccess.@Nullable CsrfView csrf) {

	}

	/**
	 * A task's payload.
	 *
	 * @param json the payload as JSON
	 * @param deadAt when a dead letter was dead-lettered (the version its edit sends
	 * back), or {@code null} for a task that is not one
	 */
	record PayloadView(String json, @Nullable Instant deadAt) {

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
