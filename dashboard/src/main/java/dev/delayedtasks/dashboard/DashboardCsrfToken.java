package dev.delayedtasks.dashboard;

/**
 * The CSRF token the dashboard's page sends with its writes, and the header that carries
 * it; the page reads it from {@code api/session}.
 *
 * @param headerName the header
 * @param token the token
 * @author delayed-tasks
 * @since 0.3.0
 */
public record DashboardCsrfToken(String headerName, String token) {

}
