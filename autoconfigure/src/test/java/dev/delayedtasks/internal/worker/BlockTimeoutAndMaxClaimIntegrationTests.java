package dev.delayedtasks.internal.worker;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code delayed-tasks.worker.block-timeout} is the timeout of every {@code BLPOP} the
 * dispatchers and timers send, and an idle dispatcher really blocks that long;
 * {@code delayed-tasks.worker.max-claim} bounds the tasks one claim leases. On a private
 * server, whose {@code MONITOR} stream carries this class's commands only.
 */
@WithRedis(privateServer = true)
class BlockTimeoutAndMaxClaimIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	BlockTimeoutAndMaxClaimIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(TokenHandler.class);
	}

	@Test
	void everyBlpopCarriesTheBlockTimeoutAndAnIdleDispatcherBlocksThatLong() throws Exception {
		String queue = "tuning-block";
		PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
		try (Monitor monitor = new Monitor(this.redis.host(), this.redis.port())) {
			// Two blocks of the idle dispatcher in a row, and the timer's.
			this.runner.withPropertyValues("test.queue=" + queue, "delayed-tasks.worker.block-timeout=1500ms")
				.run((context) -> await().atMost(Duration.ofSeconds(8))
					.until(() -> monitor.blpops(keys.wake()).size() >= 2
							&& !monitor.blpops(keys.tick(), keys.handover()).isEmpty()));
			List<Blpop> all = monitor.blpops(keys.wake(), keys.tick(), keys.handover());
			System.out.println("block-timeout: " + all);
			assertThat(all).allSatisfy((blpop) -> assertThat(blpop.timeoutSeconds()).as("%s", blpop).isEqualTo(1.5));
			List<Blpop> wakes = monitor.blpops(keys.wake());
			Blpop first = wakes.get(0);
			Blpop next = wakes.stream()
				.filter((blpop) -> blpop.client().equals(first.client()))
				.skip(1)
				.findFirst()
				.orElseThrow();
			// Redis ends a block on its timeout, never before it.
			assertThat(next.atMicros() - first.atMicros()).as("time between two blocks of the idle dispatcher (us)")
				.isGreaterThanOrEqualTo(1_450_000);
		}
	}

	@Test
	void noClaimLeasesMoreThanMaxClaimTasks() {
		String queue = "tuning-claim";
		int maxClaim = 3;
		this.runner
			.withPropertyValues("test.queue=" + queue, "test.auto-startup=false",
					"delayed-tasks.worker.max-claim=" + maxClaim)
			.run((context) -> {
				TokenHandler handler = context.getBean(TokenHandler.class);
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < 24; i++) {
					requests.add(TaskRequest.of(queue, "task " + i));
				}
				// All ready before the handler (concurrency 8) starts claiming.
				context.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
				context.getBean(DelayedTaskHandlerRegistry.class).getHandler(queue + "-handler").orElseThrow().start();
				await().atMost(Duration.ofSeconds(10)).until(() -> handler.tokens.size() == 24);
				// A lease token is the claim's nonce, ':' and a counter.
				Map<String, Long> tasksPerClaim = handler.tokens.stream()
					.collect(Collectors.groupingBy((token) -> token.substring(0, token.lastIndexOf(':')),
							Collectors.counting()));
				System.out.println("max-claim " + maxClaim + ": tasks per claim " + tasksPerClaim.values());
				assertThat(tasksPerClaim.values()).allSatisfy((count) -> assertThat(count).isBetween(1L, 3L))
					.contains(3L);
			});
	}

	/** One {@code BLPOP} as {@code MONITOR} showed it. */
	record Blpop(long atMicros, String client, List<String> keys, double timeoutSeconds) {
	}

	/**
	 * {@code MONITOR} on a connection of its own, over a plain socket (Lettuce has no
	 * monitor API): every command the server runs, as a line.
	 */
	static final class Monitor implements AutoCloseable {

		private static final Pattern LINE = Pattern.compile("^\\+?(\\d+)\\.(\\d{6}) \\[\\d+ ([^\\]]+)\\] (.*)$");

		private static final Pattern ARGUMENT = Pattern.compile("\"((?:[^\"\\\\]++|\\\\.)*+)\"");

		private final Socket socket;

		private final List<String> lines = new CopyOnWriteArrayList<>();

		private final Thread reader;

		Monitor(String host, int port) throws IOException {
			this.socket = new Socket(host, port);
			OutputStream out = this.socket.getOutputStream();
			out.write("MONITOR\r\n".getBytes(StandardCharsets.UTF_8));
			out.flush();
			BufferedReader in = new BufferedReader(
					new InputStreamReader(this.socket.getInputStream(), StandardCharsets.UTF_8));
			assertThat(in.readLine()).isEqualTo("+OK");
			this.reader = new Thread(() -> {
				try {
					for (String line = in.readLine(); line != null; line = in.readLine()) {
						this.lines.add(line);
					}
				}
				catch (IOException ex) {
					// Closed by close().
				}
			}, "redis-monitor");
			this.reader.setDaemon(true);
			this.reader.start();
		}

		/**
		 * The {@code BLPOP}s so far on any of {@code keys}.
		 */
		List<Blpop> blpops(String... keys) {
			List<Blpop> blpops = new ArrayList<>();
			for (String line : this.lines) {
				if (!line.toLowerCase(Locale.ROOT).contains("\"blpop\"")) {
					continue;
				}
				Matcher matcher = LINE.matcher(line);
				if (!matcher.matches()) {
					continue;
				}
				List<String> arguments = new ArrayList<>();
				Matcher argument = ARGUMENT.matcher(matcher.group(4));
				while (argument.find()) {
					arguments.add(argument.group(1));
				}
				if (arguments.size() < 3 || !arguments.get(0).equalsIgnoreCase("blpop")) {
					continue;
				}
				List<String> popped = arguments.subList(1, arguments.size() - 1);
				if (popped.stream().anyMatch(List.of(keys)::contains)) {
					long micros = Long.parseLong(matcher.group(1)) * 1_000_000 + Long.parseLong(matcher.group(2));
					blpops.add(new Blpop(micros, matcher.group(3), List.copyOf(popped),
							Double.parseDouble(arguments.get(arguments.size() - 1))));
				}
			}
			return blpops;
		}

		@Override
		public void close() throws Exception {
			this.socket.close();
			this.reader.join(2000);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TokenHandler {

		final List<String> tokens = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "${test.queue}", id = "${test.queue}-handler", concurrency = "8",
				autoStartup = "${test.auto-startup:true}")
		void handle(String payload, TaskContext context) {
			this.tokens.add(context.leaseToken());
		}

	}

}
