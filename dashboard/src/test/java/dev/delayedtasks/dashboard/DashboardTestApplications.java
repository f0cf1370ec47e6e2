package dev.delayedtasks.dashboard;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The applications the dashboard is tested in: Spring Security with three users (a
 * reader, a writer, someone with neither role, each with the password {@code <name>-pw}),
 * an endpoint of the application's own next to the dashboard, and handlers; the
 * application's own filter chain is chosen by {@code test.application-chain}.
 */
final class DashboardTestApplications {

	/** The dashboard's default path. */
	static final String D = "/delayed-tasks";

	/** Has the read role. */
	static final String READER = "reader";

	/** Has the write role. */
	static final String WRITER = "writer";

	/** Has neither dashboard role. */
	static final String OTHER = "other";

	private DashboardTestApplications() {
	}

	static String password(String user) {
		return user + "-pw";
	}

	/**
	 * Start an application on the class's Redis and key prefix, on a free port.
	 * @param redis the class's Redis
	 * @param sources the application's configuration classes
	 * @param args further arguments, such as {@code --delayed-tasks.dashboard.x=y}
	 * @return the running application
	 */
	static ConfigurableApplicationContext start(TestRedis redis, Class<?>[] sources, String... args) {
		return start(redis, null, sources, args);
	}

	/**
	 * Start an application on the class's Redis, on a free port.
	 * @param redis the class's Redis
	 * @param keySuffix added to the class's key prefix so that this application sees
	 * nothing of the class's others, or {@code null}
	 * @param sources the application's configuration classes
	 * @param args further arguments
	 * @return the running application
	 */
	static ConfigurableApplicationContext start(TestRedis redis, @Nullable String keySuffix, Class<?>[] sources,
			String... args) {
		List<String> all = new ArrayList<>(List.of("--spring.data.redis.url=" + redis.url(),
				"--delayed-tasks.key-prefix=" + redis.keyPrefix() + ((keySuffix != null) ? "-" + keySuffix : ""),
				"--server.port=0", "--delayed-tasks.worker.shutdown-timeout=1s", "--spring.main.banner-mode=off"));
		all.addAll(List.of(args));
		return new SpringApplicationBuilder(sources).run(all.toArray(String[]::new));
	}

	/**
	 * An application with Spring Security, its users, its own endpoint and the shared
	 * handlers. Its own filter chain, by {@code test.application-chain}:
	 * <ul>
	 * <li>{@code boot-default} (the default): none, so Spring Boot's default chain guards
	 * the rest;</li>
	 * <li>{@code deny-all}: HTTP Basic, the error page open, everything else denied;</li>
	 * <li>{@code deny-everything}: the same, the error page denied too;</li>
	 * <li>{@code authenticated}: HTTP Basic, any user may pass;</li>
	 * <li>{@code form-login}: a form login, any user may pass;</li>
	 * <li>{@code lenient}: a form login, everyone may pass, no CSRF protection.</li>
	 * </ul>
	 */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ AppEndpoint.class, Handlers.class })
	static class Secured {

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername(READER).password("{noop}" + password(READER)).roles("DELAYED_TASKS_READ").build(),
					User.withUsername(WRITER)
						.password("{noop}" + password(WRITER))
						.roles("DELAYED_TASKS_WRITE")
						.build(),
					User.withUsername(OTHER).password("{noop}" + password(OTHER)).roles("USER").build());
		}

		@Bean
		@ConditionalOnExpression("'${test.application-chain:boot-default}' != 'boot-default'")
		SecurityFilterChain applicationChain(HttpSecurity http, Environment environment) throws Exception {
			String mode = environment.getRequiredProperty("test.application-chain");
			switch (mode) {
				case "deny-all" -> http.authorizeHttpRequests(
						(requests) -> requests.requestMatchers("/error").permitAll().anyRequest().denyAll());
				case "deny-everything" -> http.authorizeHttpRequests((requests) -> requests.anyRequest().denyAll());
				case "authenticated", "form-login" -> http.authorizeHttpRequests(
						(requests) -> requests.requestMatchers("/error").permitAll().anyRequest().authenticated());
				case "lenient" -> {
					http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll());
					http.csrf((csrf) -> csrf.ignoringRequestMatchers("/**"));
				}
				default -> throw new IllegalArgumentException("No application chain " + mode);
			}
			if (mode.equals("form-login") || mode.equals("lenient")) {
				http.formLogin(Customizer.withDefaults());
			}
			else {
				http.httpBasic(Customizer.withDefaults());
			}
			return http.build();
		}

	}

	/**
	 * The application's own endpoint.
	 */
	@RestController
	static class AppEndpoint {

		@GetMapping("/hello")
		String hello() {
			return "hello from the application";
		}

		@PostMapping("/hello")
		String helloPost() {
			return "posted to the application";
		}

	}

	/**
	 * A letter: a payload its handler refuses without an address.
	 *
	 * @param to the address
	 * @param copies how many
	 */
	record Letter(String to, int copies) {

	}

	/**
	 * One run of a handler.
	 *
	 * @param id the task
	 * @param payload what the handler received
	 * @param headers the task's headers
	 */
	record Run(TaskId id, Object payload, Map<String, String> headers) {

	}

	/**
	 * Handlers of the queues {@code work} (records its runs), {@code fail-once} (refuses
	 * the first run of each task for good), {@code doomed} (refuses every run for good,
	 * with a message made of HTML) and {@code mend} (refuses a letter without an address
	 * for good).
	 */
	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		static final String HOSTILE = "<img src=x onerror=\"window.__xss=1\"><script>window.__xss=2</script>";

		private final Map<String, List<Run>> runs = new ConcurrentHashMap<>();

		private final Set<TaskId> refused = ConcurrentHashMap.newKeySet();

		@DelayedTaskHandler(queue = "work")
		void work(String payload, TaskContext context) {
			record(payload, context);
		}

		@DelayedTaskHandler(queue = "fail-once")
		void failOnce(String payload, TaskContext context) {
			record(payload, context);
			if (this.refused.add(context.id())) {
				throw new NonRetryableTaskException("refused on its first run");
			}
		}

		@DelayedTaskHandler(queue = "doomed")
		void doomed(String payload, TaskContext context) {
			record(payload, context);
			throw new NonRetryableTaskException(HOSTILE);
		}

		@DelayedTaskHandler(queue = "mend")
		void mend(Letter letter, TaskContext context) {
			record(letter, context);
			if (letter.to().isBlank()) {
				throw new NonRetryableTaskException("a letter without an address");
			}
		}

		void record(Object payload, TaskContext context) {
			this.runs.computeIfAbsent(context.queue(), (queue) -> new CopyOnWriteArrayList<>())
				.add(new Run(context.id(), payload, context.headers()));
		}

		List<Run> runs(String queue, TaskId id) {
			return this.runs.getOrDefault(queue, List.of()).stream().filter((run) -> run.id().equals(id)).toList();
		}

		List<TaskId> ran(String queue) {
			return this.runs.getOrDefault(queue, List.of()).stream().map(Run::id).toList();
		}

	}

}
