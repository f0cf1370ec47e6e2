package dev.delayedtasks.dashboard;

/**
 * What the dashboard's configurations say, the same on Spring MVC and WebFlux.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
final class DashboardMessages {

	private DashboardMessages() {
	}

	/**
	 * The warning a dashboard without Spring Security logs at start.
	 * @param properties the settings
	 * @return the warning
	 */
	static String withoutSecurity(DashboardProperties properties) {
		return "The delayed-tasks dashboard at " + properties.path()
				+ " runs without Spring Security: anyone who reaches it can "
				+ (properties.isWritesEnabled(false)
						? "pause queues and cancel, run and redrive tasks (delayed-tasks.dashboard.writes-enabled)"
						: "see its queues and tasks (it is read-only)");
	}

	/**
	 * The body of the 403 the dashboard's security chain answers a refused request with
	 * (a stale CSRF token, a missing role).
	 * @param properties the settings
	 * @return a JSON object with a {@code message}
	 */
	static String securityRefusal(DashboardProperties properties) {
		return "{\"message\":\"Refused: the dashboard's writes need the role " + properties.writeRole()
				+ " and the page's CSRF token (reload the page)\"}";
	}

}
