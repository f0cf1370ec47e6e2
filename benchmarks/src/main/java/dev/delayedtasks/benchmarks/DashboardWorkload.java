package dev.delayedtasks.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.IntFunction;

import dev.delayedtasks.autoconfigure.DelayedTasksProperties;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * {@code dashboard}: what each view of the dashboard costs Redis, read through the
 * dashboard's HTTP API as its page reads it ({@link DashboardServer}), while Redis holds
 * 1,000,000 scheduled tasks in 1,000 queues ({@link DashboardFill}), against the same
 * views over a small fill (1,000 tasks in 10 queues): the queue overview read from Redis
 * (its kept copy forgotten before each view) and from the copy, a queue's page, its
 * charts, its first 20 scheduled, ready and running tasks, a task, and the first page of
 * recurring schedules. One line per view, the small fill's figures prefixed
 * {@code small_}, and {@code growth}: Redis time per view of the large fill over the
 * small one's.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(13)
class DashboardWorkload implements Workload {

	private static final String API = "/api";

	private final DashboardFill fill;

	private final PageViewMeter meter;

	private final RedisProbe redis;

	private final Environment environment;

	private final BenchmarkProperties.Dashboard settings;

	private final int maxQueues;

	DashboardWorkload(DashboardFill fill, PageViewMeter meter, RedisProbe redis, Environment environment,
			DelayedTasksProperties library, BenchmarkProperties properties) {
		this.fill = fill;
		this.meter = meter;
		this.redis = redis;
		this.environment = environment;
		this.settings = properties.dashboard();
		this.maxQueues = library.monitoring().maxQueues();
	}

	@Override
	public String name() {
		return "dashboard";
	}

	@Override
	public List<WorkloadResult> run() {
		String url = this.environment.getRequiredProperty("spring.data.redis.url");
		try (DashboardServer server = DashboardServer.start(url, this.redis.keyPrefix())) {
			Measured small = measure(server, "dashs-", this.settings.smallQueues(), this.settings.smallTasks());
			Measured large = measure(server, "dash-", this.settings.queues(), this.settings.tasks());
			List<WorkloadResult> results = new ArrayList<>();
			for (View view : View.values()) {
				results.add(result(view, large, small));
			}
			return results;
		}
	}

	private Measured measure(DashboardServer server, String namePrefix, int queues, int tasks) {
		DashboardFill.DashboardData data = this.fill.fill(namePrefix, queues, tasks, this.settings.batch());
		try {
			Map<View, PageViewCost> costs = new LinkedHashMap<>();
			for (View view : View.values()) {
				if (view == View.OVERVIEW_CACHED) {
					server.get(API + "/queues");
				}
				costs.put(view, this.meter.measure(server, this.settings.views(), view.paths.apply(data),
						view == View.OVERVIEW));
			}
			JsonNode overview = JsonMapper.shared().readTree(server.get(API + "/queues"));
			return new Measured(data, costs, overview.get("queues").size(), overview.get("knownQueues").asInt(),
					overview.get("unreportedQueues").asInt());
		}
		finally {
			this.fill.clear(data);
		}
	}

	private WorkloadResult result(View view, Measured large, Measured small) {
		PageViewCost cost = large.costs.get(view);
		PageViewCost smallCost = small.costs.get(view);
		Map<String, Object> fields = WorkloadResult.fields("queues", large.data.queues().size(), "tasks",
				large.data.tasks(), "views", cost.views());
		if (view == View.OVERVIEW) {
			fields.putAll(WorkloadResult.fields("fill_s", large.data.millis() / 1000.0, "fill_mb",
					large.data.usedBytes() / 1e6, "max_queues", this.maxQueues, "reported_queues", large.reported,
					"known_queues", large.known, "unreported_queues", large.unreported, "redis_us_per_reported_queue",
					cost.redisMicrosPerView() / Math.max(1, large.reported)));
		}
		fields.putAll(cost.fields(""));
		fields.putAll(
				WorkloadResult.fields("small_queues", small.data.queues().size(), "small_tasks", small.data.tasks()));
		if (view == View.OVERVIEW) {
			fields.putAll(WorkloadResult.fields("small_reported_queues", small.reported, "small_known_queues",
					small.known, "small_redis_us_per_reported_queue",
					smallCost.redisMicrosPerView() / Math.max(1, small.reported)));
		}
		fields.putAll(smallCost.fields("small_"));
		fields.put("growth", cost.redisMicrosPerView() / Math.max(1e-9, smallCost.redisMicrosPerView()));
		return WorkloadResult.of(name() + view.suffix, fields, null);
	}

	/**
	 * The views, with the API paths a page reads for them: the first queue, which holds
	 * half of the tasks, for a queue's views.
	 */
	private enum View {

		OVERVIEW("-overview", (data) -> (i) -> API + "/queues"),

		OVERVIEW_CACHED("-overview-cached", (data) -> (i) -> API + "/queues"),

		QUEUE("-queue", (data) -> (i) -> API + "/queue" + DashboardServer.query("name", data.first())),

		CHARTS("-charts", (data) -> (i) -> API + "/queue/charts" + DashboardServer.query("name", data.first())),

		SCHEDULED("-scheduled",
				(data) -> (i) -> API + "/queue/scheduled"
						+ DashboardServer.query("name", data.first(), "offset", "0", "limit", "20")),

		READY("-ready",
				(data) -> (i) -> API + "/queue/ready"
						+ DashboardServer.query("name", data.first(), "offset", "0", "limit", "20")),

		RUNNING("-running",
				(data) -> (i) -> API + "/queue/running"
						+ DashboardServer.query("name", data.first(), "offset", "0", "limit", "20")),

		TASK("-task",
				(data) -> (i) -> API + "/task"
						+ DashboardServer.query("queue", data.first(), "id",
								data.taskIds().get(i % data.taskIds().size()))),

		SCHEDULES("-schedules", (data) -> (i) -> API + "/schedules" + DashboardServer.query("limit", "50"));

		private final String suffix;

		private final Function<DashboardFill.DashboardData, IntFunction<String>> paths;

		View(String suffix, Function<DashboardFill.DashboardData, IntFunction<String>> paths) {
			this.suffix = suffix;
			this.paths = paths;
		}

	}

	/**
	 * The views' costs over one fill.
	 *
	 * @param data the fill
	 * @param costs what each view cost
	 * @param reported queues the overview reports
	 * @param known queues the overview knows of
	 * @param unreported known queues it leaves out
	 */
	private record Measured(DashboardFill.DashboardData data, Map<View, PageViewCost> costs, int reported, int known,
			int unreported) {

	}

}
