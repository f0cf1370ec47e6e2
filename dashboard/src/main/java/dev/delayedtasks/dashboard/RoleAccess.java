package dev.delayedtasks.dashboard;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.security.web.csrf.CsrfToken;

/**
 * Access decided by Spring Security: roles as its request wrapper reports them
 * ({@link HttpServletRequest#isUserInRole}; the write role may read too), and the CSRF
 * token its filter put on the request.
 *
 * @param readRole the role that may look
 * @param writeRole the role that may act
 * @param writesEnabled whether anyone may act
 * @author delayed-tasks
 * @since 0.3.0
 */
public record RoleAccess(String readRole, String writeRole, boolean writesEnabled) implements DashboardAccess {

	@Override
	public boolean canRead(HttpServletRequest request) {
		return request.isUserInRole(this.readRole) || request.isUserInRole(this.writeRole);
	}

	@Override
	public boolean canWrite(HttpServletRequest request) {
		return this.writesEnabled && request.isUserInRole(this.writeRole);
	}

	@Override
	public @Nullable DashboardCsrfToken csrf(HttpServletRequest request) {
		return (request.getAttribute(CsrfToken.class.getName()) instanceof CsrfToken token)
				? new DashboardCsrfToken(token.getHeaderName(), token.getToken()) : null;
	}

}
