package dev.delayedtasks.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.function.Supplier;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringSchedulePage;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.TaskDescriptor;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
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
import org.springframework.util.StreamUtils;

/**
 * The dashboard's page, its assets and its JSON API, whatever the web stack: each method
 * is the body of one route, checks its {@link DashboardCaller} (403 when refused, and
 * every write must carry the header {@value #WRITE_HEADER}, which a form on another site
 * cannot send) and answers as a {@link ResponseEntity}. {@link DashboardController}
 * (Spring MVC) and {@link ReactiveDashboardController} (WebFlux) map requests to it, and
 * hand what it throws to {@link #failed(RuntimeException)}. It calls Redis and blocks
 * while it does.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public class DashboardApi {

	/**
	 * The header every write carries: a page of another site cannot set it on a form
	 * post, and a script of another site cannot send it without a CORS permission.
	 */
	public static final String WRITE_HEADER = "X-Delayed-Tasks-Dashboard";

	private static final Logger logger = LoggerFactory.getLogger(DashboardApi.class);

	private static final String ASSETS = "META-INF/delayed-tasks-dashboard/";

	private static final Map<String, MediaType> ASSET_TYPES = Map.of("dashboard.js",
			MediaType.parseMediaType("text/javascript;charset=UTF-8"), "dashboard.css",
			MediaType.parseMediaType("text/css;charset=UTF-8"), "favicon.svg",
			MediaType.parseMediaType("image/svg+xml"));

	private final DashboardReads reads;

	private final DashboardTasks tasks;

	private final DashboardSchedules schedules;

	private final RedisInstanceRegistry instances;

	private final DashboardActions actions;

	private final DashboardProperties properties;

	private final JsonMapper mapper;

	/**
	 * Create the API.
	 * @param reads the queues the pages show
	 * @param tasks the tasks the pages show
	 * @param schedules the recurring schedules the pages show
	 * @param instances the instances the pages show, read in two Redis calls whatever
	 * their number
	 * @param actions what users do
	 * @param properties the settings
	 * @param mapper reads edited payloads
	 */
	public DashboardApi(DashboardReads reads, DashboardTasks tasks, DashboardSchedules schedules,
			RedisInstanceRegistry instances, DashboardActions actions, DashboardProperties properties,
			JsonMapper mapper) {
		this.reads = reads;
		this.tasks = tasks;
		this.schedules = schedules;
		this.instances = instances;
		this.actions = actions;
		this.properties = properties;
		this.mapper = mapper;
	}

	ResponseEntity<Void> withoutSlash() {
		// Relative, so that the browser keeps the context path and any proxy prefix.
		String last = this.properties.path().substring(this.properties.path().lastIndexOf('/') + 1);
		return ResponseEntity.status(HttpStatus.FOUND).header(HttpHeaders.LOCATION, last + "/").build();
	}

	ResponseEntity<String> page(DashboardCaller caller) {
		checkRead(caller);
		return ResponseEntity.ok()
			.contentType(MediaType.parseMediaType("text/html;charset=UTF-8"))
			.cacheControl(CacheControl.noStore())
			.body(asset("index.html"));
	}

	ResponseEntity<String> asset(DashboardCaller caller, String name) {
		checkRead(caller);
		MediaType type = ASSET_TYPES.get(name);
		if (type == null) {
			return ResponseEntity.notFound().build();
		}
		return ResponseEntity.ok().contentType(type).cacheControl(CacheControl.noCache()).body(asset(name));
	}

	SessionView session(DashboardCaller caller, @Nullable DashboardCsrfToken csrf) {
		checkRead(caller);
		return new SessionView(caller.user(), caller.canWrite(), this.properties.showPayloads(),
				this.properties.refreshInterval().toMillis(), WRITE_HEADER, csrf);
	}

	DashboardReads.Overview queues(DashboardCaller caller) {
		checkRead(caller);
		return this.reads.overview();
	}

	ResponseEntity<DashboardReads.QueueDetail> queue(DashboardCaller caller, String name) {
		checkRead(caller);
		return found(this.reads.queue(name));
	}

	ResponseEntity<DashboardReads.Charts> charts(DashboardCaller caller, String name) {
		checkRead(caller);
		return found(this.reads.charts(name));
	}

	ResponseEntity<RedisQueueBrowser.Page> scheduled(DashboardCaller caller, String name, long offset, int limit) {
		return page(caller, name, () -> this.tasks.scheduled(name, offset, limit));
	}

	ResponseEntity<RedisQueueBrowser.ReadyPage> ready(DashboardCaller caller, String name, long offset, int limit) {
		return page(caller, name, () -> this.tasks.ready(name, offset, limit));
	}

	ResponseEntity<DashboardTasks.RunningPage> running(DashboardCaller caller, String name, long offset, int limit) {
		return page(caller, name, () -> this.tasks.running(name, offset, limit));
	}

	private <T> ResponseEntity<T> page(DashboardCaller caller, String name, Supplier<T> read) {
		checkRead(caller);
		return this.reads.knows(name) ? ResponseEntity.ok(read.get()) : ResponseEntity.notFound().build();
	}

	ResponseEntity<TaskDescriptor> task(DashboardCaller caller, String queue, String id) {
		checkRead(caller);
		return found(this.tasks.task(queue, id));
	}

	ResponseEntity<PayloadView> payload(DashboardCaller caller, String queue, String id) {
		checkRead(caller);
		checkPayloadsShown();
		String payload = this.tasks.payload(queue, id);
		return (payload != null) ? ResponseEntity.ok(new PayloadView(payload, this.tasks.deadAt(queue, id)))
				: ResponseEntity.notFound().build();
	}

	RedisInstanceRegistry.Instances instances(DashboardCaller caller) {
		checkRead(caller);
		return this.instances.alive();
	}

	DashboardTasks.TaskDetails taskDetails(DashboardCaller caller, String queue, String id) {
		checkRead(caller);
		return this.tasks.details(queue, id);
	}

	RecurringSchedulePage schedules(DashboardCaller caller, @Nullable String after, int limit) {
		checkRead(caller);
		return this.schedules.page(after, limit);
	}

	ResponseEntity<RecurringScheduleInfo> schedule(DashboardCaller caller, String id) {
		checkRead(caller);
		return ResponseEntity.of(this.schedules.schedule(id));
	}

	ResponseEntity<DashboardActions.ScheduleActionDescriptor> scheduleAction(DashboardCaller caller, String action,
			String id) {
		checkWrite(caller);
		return found(this.actions.scheduleAction(caller.user(), id, action));
	}

	ResponseEntity<ActionDescriptor> queueAction(DashboardCaller caller, String action, String name) {
		checkWrite(caller);
		return found(this.actions.queueAction(caller.user(), name, action));
	}

	ResponseEntity<ActionDescriptor> taskAction(DashboardCaller caller, String action, String queue, String id) {
		checkWrite(caller);
		return found(this.actions.taskAction(caller.user(), queue, id, action));
	}

	ResponseEntity<ActionDescriptor> reschedule(DashboardCaller caller, String queue, String id, @Nullable Long at) {
		checkWrite(caller);
		if (at == null) {
			throw new IllegalArgumentException("A reschedule names the new due time: at (epoch milliseconds)");
		}
		return found(this.actions.reschedule(caller.user(), queue, id, Instant.ofEpochMilli(at)));
	}

	ResponseEntity<ActionDescriptor> redriveEdited(DashboardCaller caller, String queue, String id,
			@Nullable Long deadAt, String payload) {
		checkWrite(caller);
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
		return found(this.actions.redriveWithPayload(caller.user(), queue, id, Instant.ofEpochMilli(deadAt), tree));
	}

	DashboardActions.GroupStep deadLetterGroup(DashboardCaller caller, String action, String queue, String reason,
			String exceptionType, @Nullable Long from, long skip) {
		checkWrite(caller);
		if (!this.reads.knows(queue)) {
			throw new IllegalArgumentException("No queue '" + queue + "'");
		}
		return this.actions.groupStep(caller.user(), queue, action, reason, exceptionType, from, skip);
	}

	/**
	 * The answer to a failed request: 400 for an invalid one, 403 for a refused one, 409
	 * for an action the state refuses, 503 with the reason (never a stack trace) when
	 * Redis does not answer.
	 * @param ex what a method of this class threw: one of the types the controllers hand
	 * over
	 * @return the answer, a JSON object with a {@code message}
	 */
	ResponseEntity<Map<String, String>> failed(RuntimeException ex) {
		if (ex instanceof InvalidEndpointRequestException invalid) {
			return ResponseEntity.badRequest().body(Map.of("message", invalid.getReason()));
		}
		if (ex instanceof IllegalArgumentException || ex instanceof InvalidTaskRequestException) {
			return ResponseEntity.badRequest().body(Map.of("message", String.valueOf(ex.getMessage())));
		}
		// A paused schedule cannot be triggered: the request is valid, the state refuses
		// it.
		if (ex instanceof DashboardActions.RefusedActionException) {
			return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("message", String.valueOf(ex.getMessage())));
		}
		if (ex instanceof AccessRefusedException) {
			return ResponseEntity.status(HttpStatus.FORBIDDEN).body(Map.of("message", String.valueOf(ex.getMessage())));
		}
		if (ex instanceof DataAccessException || ex instanceof TaskStoreException) {
			logger.warn("The delayed-tasks dashboard could not reach Redis: {}", ex.getMessage());
			return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
				.body(Map.of("message",
						"Redis did not answer; try again shortly (" + ex.getClass().getSimpleName() + ")"));
		}
		throw ex;
	}

	private void checkRead(DashboardCaller caller) {
		if (!caller.canRead()) {
			throw new AccessRefusedException("Reading the delayed-tasks dashboard needs the role "
					+ this.properties.readRole() + " or " + this.properties.writeRole());
		}
	}

	private void checkWrite(DashboardCaller caller) {
		if (!caller.canWrite()) {
			throw new AccessRefusedException(
					"Acting through the delayed-tasks dashboard needs writes enabled and the role "
							+ this.properties.writeRole());
		}
		if (!caller.writeHeader()) {
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

	private static String asset(String name) {
		try (InputStream in = new ClassPathResource(ASSETS + name, DashboardApi.class.getClassLoader())
			.getInputStream()) {
			return StreamUtils.copyToString(in, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("The dashboard's asset " + name + " cannot be read", ex);
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
			@Nullable DashboardCsrfToken csrf) {

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
