package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.function.Function;

import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.stereotype.Component;

/**
 * Runs one measured round the same way for every workload: start the queue's handler,
 * open a recording, produce, wait until every task ended and the queue is idle, stop the
 * handler, analyze.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class Rounds {

	private static final Log logger = LogFactory.getLog(Rounds.class);

	/** After the last run: long enough for a duplicate delivery of a released task. */
	private static final Duration QUIET = Duration.ofMillis(200);

	private final DelayedTaskHandlerRegistry handlers;

	private final TaskRecorder recorder;

	private final RedisProbe redis;

	private final RunAnalyzer analyzer;

	private final CostMeter costs;

	Rounds(DelayedTaskHandlerRegistry handlers, TaskRecorder recorder, RedisProbe redis, RunAnalyzer analyzer,
			CostMeter costs) {
		this.handlers = handlers;
		this.recorder = recorder;
		this.redis = redis;
		this.analyzer = analyzer;
		this.costs = costs;
	}

	/**
	 * Measure one round.
	 * @param queue the queue, whose handler has the same id
	 * @param timeout how long to wait for the tasks after the producer returned
	 * @param producer schedules the tasks, telling the given sink about each one
	 * @return the round
	 */
	Round measure(String queue, Duration timeout, Function<EnqueueSink, Produced> producer) {
		HandlerContainer handler = this.handlers.getHandler(queue)
			.orElseThrow(() -> new IllegalStateException("No handler '" + queue + "'"));
		handler.start();
		Recording recording = this.recorder.start(queue);
		Produced produced;
		Costs spent;
		try {
			CostMeter.Reading before = this.costs.read();
			produced = producer.apply(recording);
			if (!recording.awaitFinalRuns(timeout)) {
				logger.warn("Queue '" + queue + "': not every task ended within " + timeout);
			}
			if (!this.redis.awaitIdle(queue, timeout)) {
				logger.warn("Queue '" + queue + "' still has ready or leased tasks: " + this.redis.stats(queue));
			}
			// Until every task ended and the queue was idle: the QUIET pause after it
			// would add only the idle instance's own polling.
			spent = this.costs.since(before, produced.count());
			Pause.millis(QUIET.toMillis());
		}
		finally {
			this.recorder.stop(recording);
			handler.stop();
		}
		return new Round(produced, this.analyzer.analyze(recording).withCosts(spent), handler.concurrency());
	}

}
