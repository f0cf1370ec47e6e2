package dev.delayedtasks.internal.worker;

import java.time.Instant;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A worker application that the fault tests run in a JVM of its own ({@link ChildWorker})
 * and kill or stop. Arguments are Spring properties
 * ({@code --spring.data.redis.url=...}). It exits when its standard input closes, so a
 * test JVM that dies never leaves it behind.
 * <p>
 * Its handler prints one line per event, the task id first (times are epoch milliseconds;
 * due and claimed times are Redis time from the {@link TaskContext}, the others this
 * JVM's clock, the same host's):
 * <ul>
 * <li>{@code @@STARTED <id> <delivery> <attempt> <due> <claimed> <now>}</li>
 * <li>{@code @@DONE <id> <now>}: the handler returns normally</li>
 * <li>{@code @@ENDED <id> <now>}: the handler returns or throws, whatever the mode</li>
 * <li>{@code @@ALIVE <id> <now>} about every 100 ms while a {@code busy} job runs</li>
 * <li>{@code @@INTERRUPTED <id> <now>}: a {@code busy} job's thread was interrupted</li>
 * <li>{@code @@FAILED <id> <attempt> <now>}: a {@code fail-fast} handler throws</li>
 * <li>{@code @@RETRIED <id> <attempt> <nextRunAt>}: the failure of that attempt was
 * recorded and the task runs again at {@code nextRunAt} (Redis time)</li>
 * <li>{@code @@STALE <id>}: a completion was rejected as stale</li>
 * </ul>
 * A handler that returns normally returns {@code "done <index>"}, the task's result. What
 * the handler does is {@code crash.mode}: {@code sleep} (the default) sleeps as long as
 * the job says and ends when interrupted; {@code busy} runs as long as the job says and,
 * with {@code crash.on-interrupt=ignore} (the default), swallows interrupts and runs on,
 * or with {@code stop} throws at the first one; {@code fail-fast} throws at once, as a
 * handler whose downstream is down. {@code crash.report-every=N} prints the lines of one
 * task in about N only (chosen by id), for runs too many to print.
 */
public final class CrashTestWorker {

	private CrashTestWorker() {
	}

	public static void main(String[] args) {
		ParentWatchdog.start();
		new SpringApplicationBuilder(WorkerApplication.class).web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.run(args);
		System.out.println("@@READY");
		System.out.flush();
	}

	/**
	 * A job of the fault tests: how long the child's handler sleeps (a worker in the test
	 * JVM decides for itself).
	 */
	record CrashJob(int index, long sleepMillis) {
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
			DelayedTasksAutoConfiguration.class })
	static class WorkerApplication {

		private static final long ALIVE_EVERY_MILLIS = 100;

		private final String mode;

		private final boolean ignoreInterrupts;

		private final int reportEvery;

		WorkerApplication(@Value("${crash.mode:sleep}") String mode,
				@Value("${crash.on-interrupt:ignore}") String onInterrupt,
				@Value("${crash.report-every:1}") int reportEvery) {
			this.mode = mode;
			this.ignoreInterrupts = "ignore".equals(onInterrupt);
			this.reportEvery = reportEvery;
		}

		@DelayedTaskHandler(queue = "${crash.queue}", concurrency = "${crash.concurrency:4}")
		String handle(CrashJob job, TaskContext context) throws InterruptedException {
			String id = context.id().value();
			boolean reported = reported(id);
			if (reported) {
				print("@@STARTED " + id + " " + context.deliveryCount() + " " + context.attempt() + " "
						+ context.dueAt().toEpochMilli() + " " + context.startedAt().toEpochMilli() + " "
						+ System.currentTimeMillis());
			}
			try {
				switch (this.mode) {
					case "sleep" -> Thread.sleep(job.sleepMillis());
					case "busy" -> busy(id, job.sleepMillis());
					case "fail-fast" -> {
						if (reported) {
							print("@@FAILED " + id + " " + context.attempt() + " " + System.currentTimeMillis());
						}
						throw new IllegalStateException("Downstream of task " + id + " is down");
					}
					default -> throw new IllegalArgumentException("Unknown crash.mode '" + this.mode + "'");
				}
				print("@@DONE " + id + " " + System.currentTimeMillis());
				return "done " + job.index();
			}
			finally {
				if (reported) {
					print("@@ENDED " + id + " " + System.currentTimeMillis());
				}
			}
		}

		/**
		 * Run until the deadline like a handler stuck in a call that does not answer
		 * interrupts (or, with {@code crash.on-interrupt=stop}, one that does).
		 */
		private void busy(String id, long millis) throws InterruptedException {
			long deadline = System.nanoTime() + millis * 1_000_000;
			long left;
			while ((left = deadline - System.nanoTime()) > 0) {
				print("@@ALIVE " + id + " " + System.currentTimeMillis());
				try {
					Thread.sleep(Math.min(ALIVE_EVERY_MILLIS, Math.max(1, left / 1_000_000)));
				}
				catch (InterruptedException ex) {
					print("@@INTERRUPTED " + id + " " + System.currentTimeMillis());
					if (!this.ignoreInterrupts) {
						throw ex;
					}
				}
			}
		}

		private boolean reported(String id) {
			return Math.floorMod(id.hashCode(), this.reportEvery) == 0;
		}

		@Bean
		DelayedTaskListener staleReporter() {
			return new DelayedTaskListener() {

				@Override
				public void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
					String id = context.id().value();
					if (reported(id)) {
						print("@@RETRIED " + id + " " + context.attempt() + " " + nextRunAt.toEpochMilli());
					}
				}

				@Override
				public void staleAcknowledgement(TaskContext context) {
					print("@@STALE " + context.id().value());
				}

			};
		}

		private static void print(String line) {
			// One println per line: System.out locks, so lines of concurrent runs do not
			// interleave.
			System.out.println(line);
			System.out.flush();
		}

	}

}
