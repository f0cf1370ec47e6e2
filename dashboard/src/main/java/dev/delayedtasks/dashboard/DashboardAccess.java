package dev.delayedtasks.dashboard;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Who may look at the dashboard and who may act through it, asked on every request (the
 * page hides what a user may not do; the API refuses it).
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public interface DashboardAccess {

	/**
	 * Whether the request's user may read.
	 * @param request the request
	 * @return whether it may
	 */
	boolean canRead(HttpServletRequest request);

	/**
	 * Whether the request's user may act.
	 * @param request the request
	 * @return whether it may
	 */
	boolean canWrite(HttpServletRequest request);

	/**
	 * The request's user as the audit log names it.
	 * @param request the request
	 * @return the user's name, or {@code anonymous}
	 */
	default String user(HttpServletRequest request) {
		return (request.getRemoteUser() != null) ? request.getRemoteUser() : "anonymous";
	}

	/**
	 * The token the page's writes must carry.
	 * @param request the request
	 * @return the token, or {@code null} when writes need none
	 */
	default @Nullable DashboardCsrfToken csrf(HttpServletRequest request) {
		return null;
	}

	/**
	 * Access for an application without Spring Security: everyone may look, and act only
	 * when writes are enabled.
	 *
	 * @param writesEnabled whether everyone may act
	 */
	record Open(boolean writesEnabled) implements DashboardAccess {

		@Override
		public boolean canRead(HttpServletRequest request) {
			return true;
		}

		@Override
		public boolean canWrite(HttpServletRequest request) {
			return this.writesEnabled;
		}

	}

}
