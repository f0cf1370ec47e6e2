package dev.delayedtasks.observation;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import brave.Tracing;
import brave.handler.MutableSpan;
import brave.handler.SpanHandler;
import brave.propagation.B3Propagation;
import brave.propagation.Propagation;
import brave.propagation.ThreadLocalCurrentTraceContext;
import brave.propagation.TraceContext;
import brave.sampler.Sampler;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler.FirstMatchingCompositeObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.brave.bridge.BraveBaggageManager;
import io.micrometer.tracing.brave.bridge.BraveCurrentTraceContext;
import io.micrometer.tracing.brave.bridge.BravePropagator;
import io.micrometer.tracing.brave.bridge.BraveTracer;
import io.micrometer.tracing.brave.bridge.W3CPropagation;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The producer's trace context travels in the task's headers, and the handler's run
 * observation continues it: with a real Brave tracer behind Micrometer Tracing, the run
 * span has the producer's schedule span as its parent and is the current span on the
 * handler's thread.
 */
@WithRedis
class TracingIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final TestRedis redis;

	private final List<MutableSpan> spans = new CopyOnWriteArrayList<>();

	private @Nullable Tracing tracing;

	TracingIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@AfterEach
	void closeTracing() {
		if (this.tracing != null) {
			this.tracing.close();
		}
	}

	@Test
	void handlerSpanContinuesTheProducersTraceWithTheScheduleSpanAsParentOverW3c() {
		Tracer tracer = tracer(new W3CPropagation());
		String queue = "trace-w3c";
		runner(tracer, queue).run((context) -> {
			TracedHandler handler = context.getBean(TracedHandler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			Span parent = tracer.nextSpan().name("producer").start();
			TaskId id;
			try (Tracer.SpanInScope scope = tracer.withSpan(parent)) {
				id = scheduler.schedule(TaskRequest.of(queue, "hello").delay(Duration.ofMillis(500)).header("k", "v"));
			}
			finally {
				parent.end();
			}
			Map<String, String> stored = storedHeaders(context, queue, id);
			await().atMost(WAIT).until(() -> handler.runs.size() == 1 && span(queue + " run").isPresent());
			MutableSpan schedule = span(queue + " schedule").orElseThrow();
			MutableSpan run = span(queue + " run").orElseThrow();
			// The stored headers carry the schedule span's context, beside the
			// application's own.
			assertThat(stored).containsEntry("k", "v").containsKey("traceparent");
			assertThat(stored.get("traceparent")).contains(parent.context().traceId()).contains(schedule.id());
			assertThat(schedule.traceId()).isEqualTo(parent.context().traceId());
			assertThat(schedule.parentId()).isEqualTo(parent.context().spanId());
			assertThat(schedule.kind()).isEqualTo(brave.Span.Kind.PRODUCER);
			assertThat(schedule.remoteServiceName()).isEqualTo("redis");
			assertThat(schedule.tags()).containsEntry("queue", queue);
			assertThat(run.traceId()).isEqualTo(parent.context().traceId());
			assertThat(run.parentId()).isEqualTo(schedule.id());
			assertThat(run.kind()).isEqualTo(brave.Span.Kind.CONSUMER);
			assertThat(run.remoteServiceName()).isEqualTo("redis");
			assertThat(run.tags()).containsEntry("queue", queue)
				.containsEntry("handler", queue + "-handler")
				.containsEntry("outcome", "success")
				.containsEntry("task.id", id.value())
				.containsEntry("attempt", "1");
			assertThat(run.error()).isNull();
			Run seen = handler.runs.get(0);
			assertThat(seen.currentTraceId()).isEqualTo(run.traceId());
			assertThat(seen.currentSpanId()).isEqualTo(run.id());
			assertThat(seen.context().headers()).isEqualTo(stored);
		});
	}

	@Test
	void headersSetByTheCallerWinOverThePropagatedTraceContext() {
		Tracer tracer = tracer(new W3CPropagation());
		String queue = "trace-own-headers";
		// A trace context the caller carries over from elsewhere (a message it consumed).
		String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
		String spanId = "00f067aa0ba902b7";
		String callersTraceparent = "00-" + traceId + "-" + spanId + "-01";
		runner(tracer, queue).run((context) -> {
			TracedHandler handler = context.getBean(TracedHandler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			Span parent = tracer.nextSpan().name("producer").start();
			TaskId single;
			TaskId batched;
			try (Tracer.SpanInScope scope = tracer.withSpan(parent)) {
				// Due in a second, so that the stored headers can be read before the
				// runs.
				single = scheduler.schedule(TaskRequest.of(queue, "hello")
					.delay(Duration.ofSeconds(1))
					.header("traceparent", callersTraceparent));
				batched = scheduler.scheduleAll(List.of(TaskRequest.of(queue, "hello")
					.delay(Duration.ofSeconds(1))
					.header("traceparent", callersTraceparent))).get(0).id();
			}
			finally {
				parent.end();
			}
			for (TaskId id : List.of(single, batched)) {
				assertThat(storedHeaders(context, queue, id)).as("stored headers of %s", id)
					.containsEntry("traceparent", callersTraceparent);
			}
			await().atMost(WAIT).until(() -> handler.runs.size() == 2 && spans(queue + " run").size() == 2);
			assertThat(handler.runs).extracting((run) -> run.context().header("traceparent"))
				.containsOnly(callersTraceparent);
			// The runs continue the caller's trace, not the one the schedule spans were
			// in.
			assertThat(spans(queue + " run")).allSatisfy((run) -> {
				assertThat(run.traceId()).isEqualTo(traceId);
				assertThat(run.parentId()).isEqualTo(spanId);
			});
			assertThat(spans(queue + " schedule")).hasSize(2)
				.allSatisfy((schedule) -> assertThat(schedule.traceId()).isEqualTo(parent.context().traceId()));
		});
	}

	@Test
	void handlerSpanContinuesTheProducersTraceOverB3() {
		Tracer tracer = tracer(B3Propagation.newFactoryBuilder().injectFormat(B3Propagation.Format.SINGLE).build());
		String queue = "trace-b3";
		runner(tracer, queue).run((context) -> {
			TracedHandler handler = context.getBean(TracedHandler.class);
			Span parent = tracer.nextSpan().name("producer").start();
			TaskId id;
			try (Tracer.SpanInScope scope = tracer.withSpan(parent)) {
				id = context.getBean(DelayedTaskScheduler.class).enqueue(queue, "hello");
			}
			finally {
				parent.end();
			}
			await().atMost(WAIT).until(() -> handler.runs.size() == 1 && span(queue + " run").isPresent());
			MutableSpan schedule = span(queue + " schedule").orElseThrow();
			MutableSpan run = span(queue + " run").orElseThrow();
			Run seen = handler.runs.get(0);
			assertThat(seen.context().id()).isEqualTo(id);
			assertThat(seen.context().headers()).containsKey("b3");
			assertThat(seen.context().header("b3")).startsWith(parent.context().traceId() + "-" + schedule.id());
			assertThat(run.traceId()).isEqualTo(parent.context().traceId());
			assertThat(run.parentId()).isEqualTo(schedule.id());
			assertThat(seen.currentSpanId()).isEqualTo(run.id());
		});
	}

	@Test
	void scheduleInsideAParentObservationJoinsItsTrace() {
		Tracer tracer = tracer(new W3CPropagation());
		String queue = "trace-observation";
		runner(tracer, queue).run((context) -> {
			TracedHandler handler = context.getBean(TracedHandler.class);
			ObservationRegistry registry = context.getBean(ObservationRegistry.class);
			Observation parent = Observation.start("checkout", registry);
			String[] parentIds = new String[2];
			try (Observation.Scope scope = parent.openScope()) {
				parentIds[0] = tracer.currentSpan().context().traceId();
				parentIds[1] = tracer.currentSpan().context().spanId();
				context.getBean(DelayedTaskScheduler.class).enqueue(queue, "hello");
			}
			finally {
				parent.stop();
			}
			await().atMost(WAIT).until(() -> handler.runs.size() == 1 && span(queue + " run").isPresent());
			MutableSpan schedule = span(queue + " schedule").orElseThrow();
			MutableSpan run = span(queue + " run").orElseThrow();
			assertThat(schedule.traceId()).isEqualTo(parentIds[0]);
			assertThat(schedule.parentId()).isEqualTo(parentIds[1]);
			assertThat(run.traceId()).isEqualTo(parentIds[0]);
			assertThat(run.parentId()).isEqualTo(schedule.id());
			assertThat(handler.runs.get(0).currentSpanId()).isEqualTo(run.id());
		});
	}

	@Test
	void everyRunOfARetriedTaskContinuesTheSameTraceAndAFailedRunIsAnErrorSpan() {
		Tracer tracer = tracer(new W3CPropagation());
		String queue = "trace-retry";
		runner(tracer, queue).withPropertyValues("delayed-tasks.retry.delay=100ms", "delayed-tasks.retry.jitter=0ms")
			.run((context) -> {
				TracedHandler handler = context.getBean(TracedHandler.class);
				Span parent = tracer.nextSpan().name("producer").start();
				try (Tracer.SpanInScope scope = tracer.withSpan(parent)) {
					context.getBean(DelayedTaskScheduler.class).enqueue(queue, "fail-once");
				}
				finally {
					parent.end();
				}
				await().atMost(WAIT).until(() -> handler.runs.size() == 2 && spans(queue + " run").size() == 2);
				MutableSpan schedule = span(queue + " schedule").orElseThrow();
				List<MutableSpan> runs = spans(queue + " run");
				assertThat(runs).allSatisfy((run) -> {
					assertThat(run.traceId()).isEqualTo(parent.context().traceId());
					assertThat(run.parentId()).isEqualTo(schedule.id());
				});
				assertThat(runs).extracting(MutableSpan::id).doesNotHaveDuplicates();
				MutableSpan failed = runs.stream()
					.filter((run) -> "1".equals(run.tag("attempt")))
					.findFirst()
					.orElseThrow();
				MutableSpan succeeded = runs.stream()
					.filter((run) -> "2".equals(run.tag("attempt")))
					.findFirst()
					.orElseThrow();
				assertThat(failed.tag("outcome")).isEqualTo("failure");
				assertThat(failed.error()).isInstanceOf(IllegalStateException.class).hasMessage("failing once");
				assertThat(succeeded.tag("outcome")).isEqualTo("success");
				assertThat(succeeded.error()).isNull();
				assertThat(handler.runs).extracting(Run::currentSpanId)
					.containsExactlyInAnyOrder(failed.id(), succeeded.id());
			});
	}

	@Test
	void scheduleWithoutATraceStartsOneThatTheHandlerContinues() {
		Tracer tracer = tracer(new W3CPropagation());
		String queue = "trace-root";
		runner(tracer, queue).run((context) -> {
			TracedHandler handler = context.getBean(TracedHandler.class);
			assertThat(tracer.currentSpan()).isNull();
			context.getBean(DelayedTaskScheduler.class).enqueue(queue, "hello");
			await().atMost(WAIT).until(() -> handler.runs.size() == 1 && span(queue + " run").isPresent());
			MutableSpan schedule = span(queue + " schedule").orElseThrow();
			MutableSpan run = span(queue + " run").orElseThrow();
			assertThat(schedule.parentId()).isNull();
			assertThat(run.traceId()).isEqualTo(schedule.traceId());
			assertThat(run.parentId()).isEqualTo(schedule.id());
			assertThat(handler.runs.get(0).currentSpanId()).isEqualTo(run.id());
		});
	}

	@Test
	void aTrackedTasksTrackSpanIsTheAncestorOfItsRunAndEndsWhenTheProducerLearnsTheOutcome() {
		Tracer tracer = tracer(new W3CPropagation());
		String queue = "trace-tracked";
		runner(tracer, queue).run((context) -> {
			TracedHandler handler = context.getBean(TracedHandler.class);
			TrackedTask tracked = context.getBean(DelayedTaskScheduler.class).track(TaskRequest.of(queue, "hello"));
			assertThat(tracked.await(WAIT)).isPresent();
			await().atMost(WAIT).until(() -> span(queue + " track").isPresent());
			MutableSpan track = span(queue + " track").orElseThrow();
			MutableSpan schedule = span(queue + " schedule").orElseThrow();
			MutableSpan run = span(queue + " run").orElseThrow();
			assertThat(track.parentId()).isNull();
			assertThat(schedule.traceId()).isEqualTo(track.traceId());
			assertThat(schedule.parentId()).isEqualTo(track.id());
			assertThat(run.parentId()).isEqualTo(schedule.id());
			assertThat(handler.runs.get(0).currentTraceId()).isEqualTo(track.traceId());
			// The producer's wait covers the run.
			assertThat(track.finishTimestamp()).isGreaterThanOrEqualTo(run.finishTimestamp());
			assertThat(track.tags()).containsEntry("queue", queue)
				.containsEntry("outcome", "succeeded")
				.containsEntry("task.id", tracked.id().value());
			assertThat(track.error()).isNull();
		});
	}

	@Test
	void taskScheduledByAHandlerContinuesTheHandlersTrace() {
		Tracer tracer = tracer(new W3CPropagation());
		String queue = "trace-chain";
		runner(tracer, queue).run((context) -> {
			TracedHandler handler = context.getBean(TracedHandler.class);
			context.getBean(DelayedTaskScheduler.class).enqueue(queue, "chain");
			await().atMost(WAIT).until(() -> handler.runs.size() == 2 && spans(queue + " run").size() == 2);
			List<MutableSpan> schedules = spans(queue + " schedule");
			List<MutableSpan> runs = spans(queue + " run");
			assertThat(schedules).hasSize(2);
			MutableSpan first = schedules.stream().filter((span) -> span.parentId() == null).findFirst().orElseThrow();
			MutableSpan firstRun = runs.stream()
				.filter((span) -> first.id().equals(span.parentId()))
				.findFirst()
				.orElseThrow();
			MutableSpan chained = schedules.stream()
				.filter((span) -> firstRun.id().equals(span.parentId()))
				.findFirst()
				.orElseThrow();
			MutableSpan chainedRun = runs.stream()
				.filter((span) -> chained.id().equals(span.parentId()))
				.findFirst()
				.orElseThrow();
			assertThat(List.of(firstRun, chained, chainedRun)).extracting(MutableSpan::traceId)
				.containsOnly(first.traceId());
			assertThat(handler.runs).extracting(Run::currentSpanId).containsExactly(firstRun.id(), chainedRun.id());
		});
	}

	@Test
	void runThatTimesOutEndsItsSpanWithTheTimeoutOutcome() {
		Tracer tracer = tracer(new W3CPropagation());
		String queue = "trace-timeout";
		runner(tracer, queue)
			.withPropertyValues("delayed-tasks.queues.trace-timeout.timeout=300ms",
					"delayed-tasks.queues.trace-timeout.retry.max-retries=0")
			.run((context) -> {
				context.getBean(DelayedTaskScheduler.class).enqueue(queue, "sleep");
				await().atMost(WAIT).until(() -> span(queue + " run").isPresent());
				MutableSpan run = span(queue + " run").orElseThrow();
				assertThat(run.tag("outcome")).isEqualTo("timeout");
				assertThat(run.error()).isNotNull();
				assertThat(run.parentId()).isEqualTo(span(queue + " schedule").orElseThrow().id());
			});
	}

	private ApplicationContextRunner runner(Tracer tracer, String queue) {
		ObservationRegistry observations = ObservationRegistry.create();
		BravePropagator propagator = new BravePropagator(this.tracing);
		observations.observationConfig()
			.observationHandler(new FirstMatchingCompositeObservationHandler(
					new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
					new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
					new DefaultTracingObservationHandler(tracer)));
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + this.redis.url(),
					"delayed-tasks.key-prefix=" + this.redis.keyPrefix(), "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s", "test.queue=" + queue)
			.withBean(ObservationRegistry.class, () -> observations)
			.withBean(Tracer.class, () -> tracer)
			.withUserConfiguration(TracedHandler.class);
	}

	private Tracer tracer(Propagation.Factory propagation) {
		this.tracing = Tracing.newBuilder()
			.localServiceName("delayed-tasks-test")
			.currentTraceContext(ThreadLocalCurrentTraceContext.newBuilder().build())
			.propagationFactory(propagation)
			.sampler(Sampler.ALWAYS_SAMPLE)
			.addSpanHandler(new SpanHandler() {

				@Override
				public boolean end(TraceContext context, MutableSpan span, Cause cause) {
					if (cause == Cause.FINISHED) {
						TracingIntegrationTests.this.spans.add(span);
					}
					return true;
				}

			})
			.build();
		return new BraveTracer(this.tracing.tracer(), new BraveCurrentTraceContext(this.tracing.currentTraceContext()),
				new BraveBaggageManager());
	}

	private Optional<MutableSpan> span(String name) {
		List<MutableSpan> named = spans(name);
		assertThat(named).as("spans named '%s'", name).hasSizeLessThanOrEqualTo(1);
		return named.stream().findFirst();
	}

	private List<MutableSpan> spans(String name) {
		return this.spans.stream().filter((span) -> name.equals(span.name())).toList();
	}

	private static Map<String, String> storedHeaders(AssertableApplicationContext context, String queue, TaskId id) {
		String key = context.getBean(StoreSettings.class).keys(queue).payload(id.value());
		String envelope = context.getBean(StringRedisTemplate.class).opsForValue().get(key);
		assertThat(envelope).as("stored envelope of task %s", id).isNotNull();
		return context.getBean(PayloadCodec.class).read(envelope).headers();
	}

	record Run(TaskContext context, @Nullable String currentTraceId, @Nullable String currentSpanId) {

	}

	@Configuration(proxyBeanMethods = false)
	static class TracedHandler {

		final List<Run> runs = new CopyOnWriteArrayList<>();

		private final Tracer tracer;

		private final ObjectProvider<DelayedTaskScheduler> scheduler;

		TracedHandler(Tracer tracer, ObjectProvider<DelayedTaskScheduler> scheduler) {
			this.tracer = tracer;
			this.scheduler = scheduler;
		}

		@DelayedTaskHandler(queue = "${test.queue}", id = "${test.queue}-handler")
		void handle(String payload, TaskContext context) throws InterruptedException {
			Span current = this.tracer.currentSpan();
			this.runs.add(new Run(context, (current != null) ? current.context().traceId() : null,
					(current != null) ? current.context().spanId() : null));
			switch (payload) {
				case "fail-once" -> {
					if (context.attempt() == 1) {
						throw new IllegalStateException("failing once");
					}
				}
				case "chain" -> this.scheduler.getObject().enqueue(context.queue(), "chained");
				case "sleep" -> Thread.sleep(10_000);
				default -> {
				}
			}
		}

	}

}
