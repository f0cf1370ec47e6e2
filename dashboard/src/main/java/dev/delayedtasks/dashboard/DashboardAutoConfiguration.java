package dev.delayedtasks.dashboard;

import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.RedisQueueStats;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The dashboard, in a Spring MVC application that runs delayed-tasks. With Spring
 * Security on the class path it is on unless {@code delayed-tasks.dashboard.enabled} is
 * false, and a filter chain of its own, ordered first and matching only the dashboard's
 * path, asks for the read role to look and the write role to act (HTTP Basic and any
 * login the application keeps in its HTTP session, CSRF tokens on writes). Without Spring
 * Security it is off unless enabled, and read-only unless
 * {@code delayed-tasks.dashboard.writes-enabled} is true; either way it warns at start.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
@AutoConfiguration(after = DelayedTasksAutoConfiguration.class, afterName = {
		"org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration" })
@ConditionalOnWebApplication(type = Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBean(RedisQueueStats.class)
@EnableConfigurationProperties(DashboardProperties.class)
public final class DashboardAutoConfiguration {

	/**
	 * The name of the dashboard's filter chain: a bean of this name replaces it.
	 */
	public static final String SECURITY_FILTER_CHAIN = "delayedTasksDashboardSecurityFilterChain";

	private static final Logger logger = LoggerFactory.getLogger(DashboardAutoConfiguration.class);

	/**
	 * Binds (and so checks) the settings before Spring MVC reads the controller's
	 * mapping, so that a bad path fails start-up naming the property rather than as a
	 * mapping conflict.
	 * @param properties the settings
	 * @return nothing to configure
	 */
	@Bean
	WebMvcConfigurer delayedTasksDashboardSettingsCheck(DashboardProperties properties) {
		return new WebMvcConfigurer() {
		};
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ SecurityFilterChain.class, HttpSecurity.class })
	@ConditionalOnBooleanProperty(name = "delayed-tasks.dashboard.enabled", matchIfMissing = true)
	@Import(DashboardControllerConfiguration.class)
	static class SecuredDashboardConfiguration {

		@Bean
		@ConditionalOnMissingBean
		DashboardAccess delayedTasksDashboardAccess(DashboardProperties properties) {
			return new RoleAccess(properties.readRole(), properties.writeRole(), properties.isWritesEnabled(true));
		}

		/**
		 * First among the application's chains, so that a catch-all chain of the
		 * application does not hide the dashboard; it matches nothing outside the
		 * dashboard's path.
		 * @param http the application's HTTP security builder
		 * @param properties the settings
		 * @return the chain
		 * @throws Exception when the chain cannot be built
		 */
		@Bean(SECURITY_FILTER_CHAIN)
		@Order(Ordered.HIGHEST_PRECEDENCE + 50)
		@ConditionalOnMissingBean(name = SECURITY_FILTER_CHAIN)
		SecurityFilterChain delayedTasksDashboardSecurityFilterChain(HttpSecurity http, DashboardProperties properties)
				throws Exception {
			String path = properties.path();
			http.securityMatcher(path, path + "/**");
			http.authorizeHttpRequests((requests) -> requests.requestMatchers(HttpMethod.GET, path, path + "/**")
				.hasAnyRole(properties.readRole(), properties.writeRole())
				.anyRequest()
				.hasRole(properties.writeRole()));
			http.httpBasic(Customizer.withDefaults());
			// A refused request (a stale CSRF token, a missing role) answers 403 with a
			// reason here, not through
			// /error, where another chain of the application could turn it into a login
			// challenge.
			http.exceptionHandling((exceptions) -> exceptions.accessDeniedHandler((request, response, denied) -> {
				response.setStatus(HttpServletResponse.SC_FORBIDDEN);
				response.setContentType("application/json");
				response.getWriter().write(DashboardMessages.securityRefusal(properties));
			}));
			return http.build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingClass("org.springframework.security.web.SecurityFilterChain")
	@ConditionalOnBooleanProperty(name = "delayed-tasks.dashboard.enabled")
	@Import(DashboardControllerConfiguration.class)
	static class OpenDashboardConfiguration {

		@Bean
		@ConditionalOnMissingBean
		DashboardAccess delayedTasksDashboardAccess(DashboardProperties properties) {
			logger.warn(DashboardMessages.withoutSecurity(properties));
			return new DashboardAccess.Open(properties.isWritesEnabled(false));
		}

	}

}
