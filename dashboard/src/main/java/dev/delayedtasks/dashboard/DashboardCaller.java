package dev.delayedtasks.dashboard;

/**
 * The caller of one request to the dashboard, whatever the web stack: who it is, what the
 * dashboard's access rules let it do, and whether the request carries the header every
 * write must carry. Each controller builds it from its request and its access rules
 * ({@link DashboardAccess} on Spring MVC, {@link ReactiveDashboardAccess} on WebFlux);
 * {@link DashboardApi} decides with it.
 *
 * @param user the user's name as the audit log names it, or {@code anonymous}
 * @param canRead whether the user may read
 * @param canWrite whether the user may act
 * @param writeHeader whether the request carries {@value DashboardApi#WRITE_HEADER}
 * @author delayed-tasks
 * @since 0.3.0
 */
public record DashboardCaller(String user, boolean canRead, boolean canWrite, boolean writeHeader) {

}
