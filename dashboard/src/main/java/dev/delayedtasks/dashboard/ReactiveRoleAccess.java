package dev.delayedtasks.dashboard;

import java.util.Set;

import reactor.core.publisher.Mono;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.web.server.csrf.CsrfToken;
import org.springframework.web.server.ServerWebExchange;

/**
 * Access decided by reactive Spring Security: roles as the exchange's authentication
 * grants them ({@code ROLE_} authorities, as {@link RoleAccess} reads them on Spring MVC;
 * the write role may read too; an anonymous authentication has none), and the CSRF token
 * its filter put on the exchange.
 *
 * @param readRole the role that may look
 * @param writeRole the role that may act
 * @param writesEnabled whether anyone may act
 * @author delayed-tasks
 * @since 0.3.0
 */
public record ReactiveRoleAccess(String readRole, String writeRole,
		boolean writesEnabled) implements ReactiveDashboardAccess {

	private static final String ROLE_PREFIX = "ROLE_";

	@Override
	public Mono<Boolean> canRead(ServerWebExchange exchange) {
		return roles(exchange).map(
				(roles) -> roles.contains(ROLE_PREFIX + this.readRole) || roles.contains(ROLE_PREFIX + this.writeRole));
	}

	@Override
	public Mono<Boolean> canWrite(ServerWebExchange exchange) {
		return roles(exchange).map((roles) -> this.writesEnabled && roles.contains(ROLE_PREFIX + this.writeRole));
	}

	@Override
	public Mono<String> user(ServerWebExchange exchange) {
		return authentication(exchange).map(Authentication::getName).defaultIfEmpty("anonymous");
	}

	@Override
	public Mono<DashboardCsrfToken> csrf(ServerWebExchange exchange) {
		// Subscribing to it saves the token in the session, as the page needs it.
		Mono<CsrfToken> token = exchange.getAttribute(CsrfToken.class.getName());
		return (token != null) ? token.map((csrf) -> new DashboardCsrfToken(csrf.getHeaderName(), csrf.getToken()))
				: Mono.empty();
	}

	private Mono<Set<String>> roles(ServerWebExchange exchange) {
		return authentication(exchange)
			.map((authentication) -> AuthorityUtils.authorityListToSet(authentication.getAuthorities()))
			.defaultIfEmpty(Set.of());
	}

	private Mono<Authentication> authentication(ServerWebExchange exchange) {
		return exchange.getPrincipal()
			.ofType(Authentication.class)
			.filter((authentication) -> !(authentication instanceof AnonymousAuthenticationToken));
	}

}
