package dev.delayedtasks.dashboard;

import java.security.Principal;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Who may look at the dashboard and who may act through it in a WebFlux application,
 * asked on every request (the page hides what a user may not do; the API refuses it): the
 * reactive counterpart of {@link DashboardAccess}.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public interface ReactiveDashboardAccess {

	/**
	 * Whether the exchange's user may read.
	 * @param exchange the exchange
	 * @return whether it may
	 */
	Mono<Boolean> canRead(ServerWebExchange exchange);

	/**
	 * Whether the exchange's user may act.
	 * @param exchange the exchange
	 * @return whether it may
	 */
	Mono<Boolean> canWrite(ServerWebExchange exchange);

	/**
	 * The exchange's user as the audit log names it.
	 * @param exchange the exchange
	 * @return the user's name, or {@code anonymous}
	 */
	default Mono<String> user(ServerWebExchange exchange) {
		return exchange.getPrincipal().map(Principal::getName).defaultIfEmpty("anonymous");
	}

	/**
	 * The token the page's writes must carry.
	 * @param exchange the exchange
	 * @return the token, or empty when writes need none
	 */
	default Mono<DashboardCsrfToken> csrf(ServerWebExchange exchange) {
		return Mono.empty();
	}

	/**
	 * Access for an application without Spring Security: everyone may look, and act only
	 * when writes are enabled.
	 *
	 * @param writesEnabled whether everyone may act
	 */
	record Open(boolean writesEnabled) implements ReactiveDashboardAccess {

		@Override
		public Mono<Boolean> canRead(ServerWebExchange exchange) {
			return Mono.just(true);
		}

		@Override
		public Mono<Boolean> canWrite(ServerWebExchange exchange) {
			return Mono.just(this.writesEnabled);
		}

	}

}
