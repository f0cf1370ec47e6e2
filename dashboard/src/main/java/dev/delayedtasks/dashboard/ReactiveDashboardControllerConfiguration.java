package dev.delayedtasks.dashboard;

import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The dashboard's WebFlux controller and what it serves, imported only by the
 * configuration that decided who may use the dashboard.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
@Configuration(proxyBeanMethods = false)
@Import(DashboardBeans.class)
class ReactiveDashboardControllerConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ReactiveDashboardController delayedTasksDashboardController(DashboardApi api, ReactiveDashboardAccess access) {
		// Reads and actions call Redis and wait for it: never on the event loop.
		return new ReactiveDashboardController(api, access, Schedulers.boundedElastic());
	}

}
