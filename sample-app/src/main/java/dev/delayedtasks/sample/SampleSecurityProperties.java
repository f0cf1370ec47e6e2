package dev.delayedtasks.sample;

import java.util.regex.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The passwords of the sample's two Actuator users, under {@code sample.security}. Each
 * is stored the way Spring Security's {@code DelegatingPasswordEncoder} reads it: an
 * encoding id in braces, then the encoded password, for example
 * {@code {bcrypt}$2a$10$...}. The defaults in {@code application.yml} are {@code {noop}}
 * demo values for a local run; set real ones (hashed) anywhere else.
 *
 * @param userPassword the password of {@code user}, who may read every exposed endpoint
 * @param adminPassword the password of {@code admin}, who may also call write operations
 * @author delayed-tasks
 * @since 0.1.0
 */
@ConfigurationProperties("sample.security")
record SampleSecurityProperties(String userPassword, String adminPassword) {

	private static final Pattern ENCODED = Pattern.compile("\\{[^{}]+\\}.+");

	SampleSecurityProperties {
		check("sample.security.user-password", userPassword);
		check("sample.security.admin-password", adminPassword);
	}

	private static void check(String property, String value) {
		// Fail at startup rather than on every login, and never echo the value.
		if (value == null || !ENCODED.matcher(value).matches()) {
			throw new IllegalArgumentException(property + " must be an encoded password with its encoding id, "
					+ "for example {bcrypt}$2a$10$... (or {noop}text for a local demo)");
		}
	}

}
