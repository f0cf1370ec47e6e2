package dev.delayedtasks.sample;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Who may use the sample's Actuator endpoints and its quotes API, over HTTP Basic:
 * {@code health} and {@code info} are open (load balancers and CI probe them), every
 * other read and the quotes API need a login, and every Actuator write (the
 * {@code delayedtasks} endpoint's pause, resume, redrive, cancel and purge) needs the
 * {@code ADMIN} role. {@code application.yml} grants the endpoint write access
 * ({@code management.endpoint.delayedtasks.access=unrestricted}); this class decides who
 * may use it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(SampleSecurityProperties.class)
class SampleSecurityConfiguration {

	@Bean
	@Order(1)
	SecurityFilterChain actuatorSecurityFilterChain(HttpSecurity http) throws Exception {
		http.securityMatcher(EndpointRequest.toAnyEndpoint());
		http.authorizeHttpRequests((requests) -> requests.requestMatchers(EndpointRequest.to("health", "info"))
			.permitAll()
			.requestMatchers(EndpointRequest.toAnyEndpoint().withHttpMethod(HttpMethod.GET))
			.authenticated()
			.anyRequest()
			.hasRole("ADMIN"));
		http.httpBasic(Customizer.withDefaults());
		http.sessionManagement((session) -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS));
		// CSRF protection exists for browser sessions, whose cookie a forged request
		// would carry. This chain is a stateless API for scripts and scrapers that send
		// their credentials with every request and never get a session, so a CSRF token
		// would only break them. Only this chain (Actuator paths) turns it off. Browsers
		// resend cached Basic credentials, so do not drive these endpoints from one.
		http.csrf((csrf) -> csrf.disable());
		return http.build();
	}

	@Bean
	@Order(2)
	SecurityFilterChain quotesSecurityFilterChain(HttpSecurity http) throws Exception {
		// The quotes API (QuoteController): any logged-in user, over HTTP Basic,
		// stateless
		// like the Actuator chain and for the same reason without CSRF tokens.
		http.securityMatcher("/quotes", "/quotes/**");
		http.authorizeHttpRequests((requests) -> requests.anyRequest().authenticated());
		http.httpBasic(Customizer.withDefaults());
		http.sessionManagement((session) -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS));
		http.csrf((csrf) -> csrf.disable());
		return http.build();
	}

	@Bean
	SecurityFilterChain applicationSecurityFilterChain(HttpSecurity http) throws Exception {
		// The sample serves nothing but Actuator and the quotes API: anything else stays
		// closed until someone decides who may use it. /error stays open so that a 401 or
		// 403 from the chains above keeps its body.
		http.authorizeHttpRequests((requests) -> requests.requestMatchers("/error").permitAll().anyRequest().denyAll());
		return http.build();
	}

	@Bean
	InMemoryUserDetailsManager sampleUsers(SampleSecurityProperties properties) {
		return new InMemoryUserDetailsManager(
				User.withUsername("user").password(properties.userPassword()).roles("USER").build(),
				User.withUsername("admin").password(properties.adminPassword()).roles("USER", "ADMIN").build());
	}

	@Bean
	PasswordEncoder passwordEncoder() {
		// Reads the encoding id in front of each stored password: {bcrypt}, {noop}, ...
		return PasswordEncoderFactories.createDelegatingPasswordEncoder();
	}

}
