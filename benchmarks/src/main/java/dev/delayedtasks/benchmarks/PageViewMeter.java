package dev.delayedtasks.benchmarks;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.stereotype.Component;

/**
 * Measures one kind of dashboard view: after a fifth as many unmeasured views, a batch of
 * views read one after the other through the dashboard's HTTP API, each timed on this
 * side, and what Redis did meanwhile: the commands the dashboard's application sent
 * ({@link CommandCounts}), the time {@code INFO commandstats} says Redis spent in them,
 * and Redis's CPU time ({@code INFO cpu}). A batch during which another client ran a
 * script on Redis, or one of whose views sent more commands than the others (a background
 * job of the dashboard's application), is measured again, up to three times.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class PageViewMeter {

	private static final Log logger = LogFactory.getLog(PageViewMeter.class);

	private static final int ATTEMPTS = 3;

	private final RedisProbe redis;

	PageViewMeter(RedisProbe redis) {
		this.redis = redis;
	}

	/**
	 * Measure a view.
	 * @param server the dashboard
	 * @param views how many views to measure
	 * @param paths the path of the i-th view
	 * @param uncached whether to forget the dashboard's copy of the overview before each
	 * view
	 * @return what a view cost
	 */
	PageViewCost measure(DashboardServer server, int views, IntFunction<String> paths, boolean uncached) {
		for (int i = 0; i < Math.max(1, views / 5); i++) {
			view(server, paths.apply(i), uncached);
		}
		PageViewCost cost = batch(server, views, paths, uncached, 1);
		for (int attempt = 2; attempt <= ATTEMPTS && cost.disturbed(); attempt++) {
			logger.info("Measuring " + paths.apply(0) + " again: other commands ran on Redis meanwhile");
			cost = batch(server, views, paths, uncached, attempt);
		}
		return cost;
	}

	private PageViewCost batch(DashboardServer server, int views, IntFunction<String> paths, boolean uncached,
			int attempt) {
		long[] nanos = new long[views];
		long[] calls = new long[views];
		Map<String, CommandTime> timesBefore = this.redis.commandTimes();
		Map<String, Long> sentBefore = server.commands().byCommand();
		long connectionsBefore = this.redis.connectionsReceived();
		long cpuBefore = this.redis.cpuMicros();
		for (int i = 0; i < views; i++) {
			long before = server.commands().total();
			nanos[i] = view(server, paths.apply(i), uncached);
			calls[i] = server.commands().total() - before;
		}
		long cpu = this.redis.cpuMicros() - cpuBefore;
		long connections = this.redis.connectionsReceived() - connectionsBefore;
		Map<String, Long> sent = new TreeMap<>();
		server.commands().byCommand().forEach((command, count) -> {
			long more = count - sentBefore.getOrDefault(command, 0L);
			if (more > 0) {
				sent.put(command, more);
			}
		});
		Map<String, CommandTime> times = new HashMap<>();
		this.redis.commandTimes()
			.forEach((command, time) -> times.put(command,
					time.minus(timesBefore.getOrDefault(command, CommandTime.NONE))));
		// Scripts whole, with the commands they call; other commands in the share the
		// dashboard sent (the rest of their calls were made by its scripts, and are in
		// the scripts' time already).
		double micros = 0;
		long sentScripts = 0;
		for (Map.Entry<String, Long> command : sent.entrySet()) {
			CommandTime time = times.getOrDefault(command.getKey(), CommandTime.NONE);
			if (time.calls() > 0) {
				micros += time.micros() * Math.min(1.0, (double) command.getValue() / time.calls());
			}
			if (RedisProbe.isScript(command.getKey())) {
				sentScripts += command.getValue();
			}
		}
		long scripts = times.entrySet()
			.stream()
			.filter((entry) -> RedisProbe.isScript(entry.getKey()))
			.mapToLong((entry) -> entry.getValue().calls())
			.sum();
		boolean steady = true;
		for (long count : calls) {
			steady &= count == calls[0];
		}
		return new PageViewCost(views, sent, micros, cpu, connections, nanos, attempt, scripts - sentScripts, !steady);
	}

	private static long view(DashboardServer server, String path, boolean uncached) {
		if (uncached) {
			server.forgetOverview();
		}
		long start = System.nanoTime();
		server.get(path);
		return System.nanoTime() - start;
	}

}
