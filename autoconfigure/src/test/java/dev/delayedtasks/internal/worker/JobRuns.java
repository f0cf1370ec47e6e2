package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;

import org.springframework.context.annotation.Configuration;

/**
 * The handler of the fault tests that run named jobs under load on {@code ${test.queue}}:
 * it counts each job's runs and keeps its first lateness (start − due, both Redis time).
 */
@Configuration(proxyBeanMethods = false)
class JobRuns {

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	private final Map<String, Long> lateness = new ConcurrentHashMap<>();

	@DelayedTaskHandler(queue = "${test.queue}", concurrency = "4")
	void run(Job job, TaskContext context) {
		this.lateness.putIfAbsent(job.name(), Duration.between(context.dueAt(), context.startedAt()).toMillis());
		this.runs.computeIfAbsent(job.name(), (name) -> new AtomicInteger()).incrementAndGet();
	}

	int runs(String name) {
		AtomicInteger count = this.runs.get(name);
		return (count != null) ? count.get() : 0;
	}

	long latenessMillis(String name) {
		return this.lateness.get(name);
	}

	/**
	 * Every job's first lateness, sorted.
	 * @return the lateness in milliseconds
	 */
	List<Long> latenessMillis() {
		return this.lateness.values().stream().sorted().toList();
	}

	record Job(String name) {
	}

}
