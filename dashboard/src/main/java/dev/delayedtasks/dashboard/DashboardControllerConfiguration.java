package dev.delayedtasks.dashboard;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The dashboard's Spring MVC controller and what it serves, imported only by the
 * configuration that decided who may use the dashboard.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
@Configuration(proxyBeanMethods = false)
@Import(DashboardBeans.class)
class DashboardControllerConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DashboardController delayedTasksDashboardController(DashboardApi api, DashboardAccess access) {
		return new DashboardController(api, access);
	}

}
