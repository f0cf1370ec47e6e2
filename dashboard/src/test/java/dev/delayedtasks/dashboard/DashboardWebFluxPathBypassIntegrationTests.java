package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.dashboard.DashboardTestApplications.AppEndpoint;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.ReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher.MatchResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard's reactive chain against path tricks, as
 * {@link DashboardPathBypassIntegrationTests} on Spring MVC: with an application chain
 * that lets everyone pass without CSRF, a write by a path the dashboard's chain might not
 * match never reaches the dashboard, and anonymous reads by such paths return no data.
 */
@WithRedis
class DashboardWebFluxPathBypassIntegrationTests {

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardWebFluxTestApplications.start(redis, null, null, new Class<?>[] { Lenient.class });
		context.getBean(DelayedTaskScheduler.class)
			.schedule(TaskRequest.of("work", "x").id("..").delay(Duration.ofHours(1)));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void noPathTrickSkipsTheDashboardsCsrfCheck() throws Exception {
		QueueControl control = context.getBean(QueueControl.class);
		Http writer = Http.anonymous(context);
		writer.formLogin("", DashboardTestApplications.WRITER);
		String name = Http.query("name", "work");
		StringBuilder answers = new StringBuilder();
		for (String path : List.of("/delayed-tasks/api/queue/pause" + name,
				"/delayed-tasks/api/queue/x/../pause" + name, "/delayed-tasks/api/queue/x/%2E%2E/pause" + name,
				"/delayed-tasks/api/x/%2e%2e/queue/pause" + name, "/x/../delayed-tasks/api/queue/pause" + name,
				"/delayed-tasks/./api/queue/pause" + name, "/delayed-tasks/api/queue/pause/." + name,
				"/delayed-tasks/api/queue/pause;" + name, "/delayed-tasks;x=1/api/queue/pause" + name,
				"/delayed-tasks/api;x=1/queue/pause" + name, "/delayed-tasks/api/queue/pause;x=1" + name,
				"/delayed-tasks/api/queue/./pause" + name, "/delayed-tasks/api/queue/pause/" + name,
				"//delayed-tasks/api/queue/pause" + name, "/delayed-tasks//api/queue/pause" + name,
				"/DELAYED-TASKS/api/queue/pause" + name, "/delayed-tasks%2Fapi%2Fqueue%2Fpause" + name,
				"/delayed-tasks/api%2Fqueue/pause" + name, "/delayed-tasks/api/queue/pause%3B" + name)) {
			HttpResponse<String> response = writer.send("POST", path,
					Map.of("Origin", "https://evil.example", DashboardApi.WRITE_HEADER, "1"));
			answers.append(path).append(" -> ").append(response.statusCode()).append('\n');
			assertThat(control.isPaused("work")).as(answers.toString()).isFalse();
		}
		assertThat(writer.write(DashboardTestApplications.D, "/delayed-tasks/api/queue/pause" + name).statusCode())
			.isEqualTo(200);
		assertThat(control.isPaused("work")).isTrue();
		control.resume("work");
	}

	@Test
	void noPathTrickLetsAnAnonymousCallerRead() throws Exception {
		String dots = Http.query("queue", "work", "id", "..");
		List<String> answers = new ArrayList<>();
		for (String path : List.of("/delayed-tasks/api/task" + dots, "/delayed-tasks/api/queue/%2E%2E?name=work",
				"/delayed-tasks/api/queue/x/..?name=work", "/x/../delayed-tasks/api/queues",
				"/delayed-tasks/./api/queues", "/delayed-tasks/api/x/../queues", "/delayed-tasks/api/x/%2e%2e/queues",
				"/delayed-tasks/api/task/.." + dots, "/delayed-tasks;x=1/api/queues", "/delayed-tasks/api/queues;x=1",
				"/delayed-tasks/api/queues/", "//delayed-tasks/api/queues", "/delayed-tasks//api/queues",
				"/DELAYED-TASKS/api/queues", "/delayed-tasks%2Fapi%2Fqueues", "/delayed-tasks/api%2Fqueues")) {
			HttpResponse<String> response = Http.anonymous(context).get(path);
			answers.add(path + " -> " + response.statusCode());
			assertThat(response.body()).as(path + " -> " + response.statusCode())
				.doesNotContain("knownQueues", "\"scheduled\":", "\"state\"");
		}
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ AppEndpoint.class, Handlers.class, DashboardWebFluxTestApplications.Netty.class })
	static class Lenient {

		@Bean
		ReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername(DashboardTestApplications.READER)
						.password("{noop}" + DashboardTestApplications.password(DashboardTestApplications.READER))
						.roles("DELAYED_TASKS_READ")
						.build(),
					User.withUsername(DashboardTestApplications.WRITER)
						.password("{noop}" + DashboardTestApplications.password(DashboardTestApplications.WRITER))
						.roles("DELAYED_TASKS_WRITE")
						.build())::findByUsername;
		}

		@Bean
		SecurityWebFilterChain applicationChain(ServerHttpSecurity http) {
			http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll());
			http.csrf((csrf) -> csrf.requireCsrfProtectionMatcher((exchange) -> MatchResult.notMatch()));
			http.formLogin(Customizer.withDefaults());
			return http.build();
		}

	}

}
