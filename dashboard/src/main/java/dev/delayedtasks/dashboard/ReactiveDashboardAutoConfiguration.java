package dev.delayedtasks.dashboard;

import java.nio.charset.StandardCharsets;

import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.RedisQueueStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.authentication.HttpBasicServerAuthenticationEntryPoint;
import org.springframework.security.web.server.authorization.ServerAccessDeniedHandler;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/**
 * The dashboard, in a WebFlux application that runs delayed-tasks: the same page, API and
 * rules as {@link DashboardAutoConfiguration} gives a Spring MVC application. With
 * reactive Spring Security on the class path it is on unless
 * {@code delayed-tasks.dashboard.enabled} is false, and a filter chain of its own,
 * ordered first and matching only the dashboard's path, asks for the read role to look
 * and the write role to act (HTTP Basic and any login the application keeps in its web
 * session, CSRF tokens on writes). Without Spring Security it is off unless enabled, and
 * read-only unless {@code delayed-tasks.dashboard.writes-enabled} is true; either way it
 * warns at start.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
@AutoConfiguration(after = DelayedTasksAutoConfiguration.class, afterName = {
		"org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration" })
@ConditionalOnWebApplication(type = Type.REACTIVE)
@ConditionalOnClass({ DispatcherHandler.class, Mono.class })
@ConditionalOnBean(RedisQueueStats.class)
@EnableConfigurationProperties(DashboardProperties.class)
public final class ReactiveDashboardAutoConfiguration {

	/**
	 * The name of the dashboard's filter chain: a bean of this name replaces it.
	 */
	public static final String SECURITY_WEB_FILTER_CHAIN = "delayedTasksDashboardSecurityWebFilterChain";

	/**
	 * The name of the chain that keeps Spring Security's default for the rest of an
	 * application that declares no chain of its own.
	 */
	public static final String DEFAULT_SECURITY_WEB_FILTER_CHAIN = "delayedTasksDashboardDefaultSecurityWebFilterChain";

	private static final Logger logger = LoggerFactory.getLogger(ReactiveDashboardAutoConfiguration.class);

	/**
	 * Binds (and so checks) the settings before WebFlux reads the controller's mapping,
	 * so that a bad path fails start-up naming the property rather than as a mapping
	 * conflict.
	 * @param properties the settings
	 * @return nothing to configure
	 */
	@Bean
	WebFluxConfigurer delayedTasksDashboardSettingsCheck(DashboardProperties properties) {
		return new WebFluxConfigurer() {
		};
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ SecurityWebFilterChain.class, ServerHttpSecurity.class })
	@ConditionalOnBooleanProperty(name = "delayed-tasks.dashboard.enabled", matchIfMissing = true)
	@Import(ReactiveDashboardControllerConfiguration.class)
	static class SecuredDashboardConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ReactiveDashboardAccess delayedTasksDashboardAccess(DashboardProperties properties) {
			return new ReactiveRoleAccess(properties.readRole(), properties.writeRole(),
					properties.isWritesEnabled(true));
		}

		/**
		 * First among the application's chains, so that a catch-all chain of the
		 * application does not hide the dashboard; it matches nothing outside the
		 * dashboard's path.
		 * @param http the application's HTTP security builder
		 * @param properties the settings
		 * @return the chain
		 */
		@Bean(SECURITY_WEB_FILTER_CHAIN)
		@Order(Ordered.HIGHEST_PRECEDENCE + 50)
		@ConditionalOnMissingBean(name = SECURITY_WEB_FILTER_CHAIN)
		SecurityWebFilterChain delayedTasksDashboardSecurityWebFilterChain(ServerHttpSecurity http,
				DashboardProperties properties) {
			String path = properties.path();
			http.securityMatcher(ServerWebExchangeMatchers.pathMatchers(path, path + "/**"));
			http.authorizeExchange((exchanges) -> exchanges.pathMatchers(HttpMethod.GET, path, path + "/**")
				.hasAnyRole(properties.readRole(), properties.writeRole())
				.anyExchange()
				.hasRole(properties.writeRole()));
			http.httpBasic(Customizer.withDefaults());
			// A refused request (a stale CSRF token, a missing role) answers 403 with a
			// reason, whichever filter refuses it.
			ServerAccessDeniedHandler refused = (exchange, denied) -> refuse(exchange.getResponse(), properties);
			http.csrf((csrf) -> csrf.accessDeniedHandler(refused));
			http.exceptionHandling((exceptions) -> exceptions.accessDeniedHandler(refused)
				.authenticationEntryPoint(new HttpBasicServerAuthenticationEntryPoint()));
			return http.build();
		}

		private static Mono<Void> refuse(ServerHttpResponse response, DashboardProperties properties) {
			response.setStatusCode(HttpStatus.FORBIDDEN);
			response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
			byte[] body = DashboardMessages.securityRefusal(properties).getBytes(StandardCharsets.UTF_8);
			return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
		}

		/**
		 * Spring Security builds its default chain (every request authenticated, HTTP
		 * Basic and a form login) only while the application declares none: the
		 * dashboard's chain would take it away from the rest of the application, so it is
		 * declared here then. Registered before the dashboard's chain (a member class),
		 * which its condition must not see.
		 */
		@Configuration(proxyBeanMethods = false)
		static class DefaultChainConfiguration {

			@Bean(DEFAULT_SECURITY_WEB_FILTER_CHAIN)
			@ConditionalOnMissingBean(SecurityWebFilterChain.class)
			SecurityWebFilterChain delayedTasksDashboardDefaultSecurityWebFilterChain(ServerHttpSecurity http) {
				http.authorizeExchange((exchanges) -> exchanges.anyExchange().authenticated());
				http.httpBasic(Customizer.withDefaults());
				http.formLogin(Customizer.withDefaults());
				return http.build();
			}

		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingClass("org.springframework.security.web.server.SecurityWebFilterChain")
	@ConditionalOnBooleanProperty(name = "delayed-tasks.dashboard.enabled")
	@Import(ReactiveDashboardControllerConfiguration.class)
	static class OpenDashboardConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ReactiveDashboardAccess delayedTasksDashboardAccess(DashboardProperties properties) {
			logger.warn(DashboardMessages.withoutSecurity(properties));
			return new ReactiveDashboardAccess.Open(properties.isWritesEnabled(false));
		}

	}

}
