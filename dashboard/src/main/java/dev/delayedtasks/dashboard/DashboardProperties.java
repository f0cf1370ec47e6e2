package dev.delayedtasks.dashboard;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The dashboard's settings, under {@code delayed-tasks.dashboard}. Checked while bound: a
 * bad path, role or interval fails start-up with a message naming the property.
 *
 * @param enabled Whether the dashboard is served. Unset: on when Spring Security is on
 * the class path, off without it.
 * @param path Where the dashboard is served, below the context path: starts with '/',
 * does not end with one.
 * @param readRole The role that may look (without the "ROLE_" prefix). The write role may
 * look too.
 * @param writeRole The role that may also act: pause, resume, cancel, run now, redrive.
 * @param writesEnabled Whether the dashboard offers writes at all. Unset: on with Spring
 * Security (the write role decides), off without it.
 * @param showPayloads Whether the task view shows payloads and lets the write role edit a
 * dead letter's payload before redriving it (payloads can hold personal data).
 * @param refreshInterval How often an open page refreshes; reads of the queue overview
 * are served from a copy of this age, so any number of open pages cost Redis one read per
 * interval.
 * @author delayed-tasks
 * @since 0.3.0
 */
@ConfigurationProperties("delayed-tasks.dashboard")
public record DashboardProperties(@Nullable Boolean enabled, @DefaultValue("/delayed-tasks") String path,
		@DefaultValue("DELAYED_TASKS_READ") String readRole, @DefaultValue("DELAYED_TASKS_WRITE") String writeRole,
		@Nullable Boolean writesEnabled, @DefaultValue("false") boolean showPayloads,
		@DefaultValue("5s") Duration refreshInterval) {

	/**
	 * Check the settings.
	 * @param enabled whether the dashboard is served
	 * @param path where it is served
	 * @param readRole the role that may look
	 * @param writeRole the role that may act
	 * @param writesEnabled whether writes are offered
	 * @param showPayloads whether payloads are shown
	 * @param refreshInterval how often a page refreshes
	 * @throws IllegalArgumentException naming the property and the problem
	 */
	public DashboardProperties {
		if (!path.matches("(/[A-Za-z0-9._~-]+)+")) {
			throw new IllegalArgumentException("delayed-tasks.dashboard.path must start with '/', not end with one, "
					+ "and hold only letters, digits and . _ ~ - between slashes: '" + path + "'");
		}
		checkRole("read-role", readRole);
		checkRole("write-role", writeRole);
		if (refreshInterval.compareTo(Duration.ofSeconds(1)) < 0
				|| refreshInterval.compareTo(Duration.ofHours(1)) > 0) {
			throw new IllegalArgumentException(
					"delayed-tasks.dashboard.refresh-interval must be between 1s and 1h: " + refreshInterval);
		}
	}

	private static void checkRole(String property, String role) {
		if (!role.matches("[A-Za-z0-9_.-]+") || role.startsWith("ROLE_")) {
			throw new IllegalArgumentException("delayed-tasks.dashboard." + property
					+ " must be a role name without the ROLE_ prefix (letters, digits, _ . -): '" + role + "'");
		}
	}

	/**
	 * Whether writes are offered.
	 * @param securityPresent whether Spring Security is on the class path
	 * @return whether writes are offered to those allowed them
	 */
	boolean isWritesEnabled(boolean securityPresent) {
		return (this.writesEnabled != null) ? this.writesEnabled : securityPresent;
	}

}
