package dev.delayedtasks.dashboard;

import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.dashboard.DashboardTestApplications.AppEndpoint;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.test.TestRedis;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.ReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * The WebFlux applications the dashboard is tested in, on Netty, as
 * {@link DashboardTestApplications} has them for Spring MVC: the same three users, the
 * application's own endpoint and the same handlers; the application's own chain is chosen
 * by {@code test.application-chain}. Spring MVC is on the test class path too, so the
 * applications are started as reactive ones explicitly.
 */
final class DashboardWebFluxTestApplications {

	private DashboardWebFluxTestApplications() {
	}

	/**
	 * Start a reactive application on the class's Redis, on a free port.
	 * @param redis the class's Redis
	 * @param keySuffix added to the class's key prefix, or {@code null}
	 * @param classLoader the class loader, such as one that hides Spring Security, or
	 * {@code null} for the test's
	 * @param sources the application's configuration classes
	 * @param args further arguments
	 * @return the running application
	 */
	static ConfigurableApplicationContext start(TestRedis redis, @Nullable String keySuffix,
			@Nullable ClassLoader classLoader, Class<?>[] sources, String... args) {
		List<String> all = new ArrayList<>(List.of("--spring.data.redis.url=" + redis.url(),
				"--delayed-tasks.key-prefix=" + redis.keyPrefix() + ((keySuffix != null) ? "-" + keySuffix : ""),
				"--server.port=0", "--delayed-tasks.worker.shutdown-timeout=1s", "--spring.main.banner-mode=off"));
		all.addAll(List.of(args));
		SpringApplicationBuilder builder = new SpringApplicationBuilder(sources).web(WebApplicationType.REACTIVE);
		if (classLoader != null) {
			builder.resourceLoader(new DefaultResourceLoader(classLoader));
		}
		return builder.run(all.toArray(String[]::new));
	}

	/**
	 * A WebFlux application on Netty with reactive Spring Security, its users, its own
	 * endpoint and the shared handlers. Its own chain, by {@code test.application-chain}:
	 * <ul>
	 * <li>{@code boot-default} (the default): none;</li>
	 * <li>{@code deny-all}: HTTP Basic, everything denied;</li>
	 * <li>{@code form-login}: a form login, any user may pass.</li>
	 * </ul>
	 */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ AppEndpoint.class, Handlers.class, Netty.class })
	static class SecuredReactive {

		// Only a lookup: a MapReactiveUserDetailsService would also re-encode each
		// {noop} password with BCrypt at the first login, which makes every Basic login
		// cost tens of milliseconds of CPU.
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
						.build(),
					User.withUsername(DashboardTestApplications.OTHER)
						.password("{noop}" + DashboardTestApplications.password(DashboardTestApplications.OTHER))
						.roles("USER")
						.build())::findByUsername;
		}

		@Bean
		@ConditionalOnExpression("'${test.application-chain:boot-default}' != 'boot-default'")
		SecurityWebFilterChain applicationChain(ServerHttpSecurity http, Environment environment) {
			String mode = environment.getRequiredProperty("test.application-chain");
			switch (mode) {
				case "deny-all" -> {
					http.authorizeExchange((exchanges) -> exchanges.anyExchange().denyAll());
					http.httpBasic(Customizer.withDefaults());
				}
				case "form-login" -> {
					http.authorizeExchange((exchanges) -> exchanges.anyExchange().authenticated());
					http.formLogin(Customizer.withDefaults());
				}
				default -> throw new IllegalArgumentException("No application chain " + mode);
			}
			return http.build();
		}

	}

	/**
	 * A WebFlux application on Netty for a class path without Spring Security: its own
	 * endpoint and the shared handlers.
	 */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ AppEndpoint.class, Handlers.class, Netty.class })
	static class OpenReactive {

	}

	/**
	 * Netty, though Tomcat is on the test class path too, on event loops of the
	 * application's own: a test class runs several applications at once, and one that
	 * closes must not dispose of the others' (global) loops.
	 */
	static class Netty {

		@Bean
		ReactorResourceFactory reactorResourceFactory() {
			ReactorResourceFactory resources = new ReactorResourceFactory();
			resources.setUseGlobalResources(false);
			return resources;
		}

		@Bean
		NettyReactiveWebServerFactory nettyReactiveWebServerFactory(ReactorResourceFactory resources) {
			NettyReactiveWebServerFactory factory = new NettyReactiveWebServerFactory();
			factory.setResourceFactory(resources);
			return factory;
		}

	}

}
