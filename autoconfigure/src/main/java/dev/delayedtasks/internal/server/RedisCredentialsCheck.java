package dev.delayedtasks.internal.server;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * Warns at startup when {@code spring.data.redis.url} and
 * {@code spring.data.redis.username} name different users. Spring Boot then connects with
 * the URL's credentials, so an application that set a least-privilege username connects
 * as the URL's user, often {@code default}, without noticing.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisCredentialsCheck {

	private static final Log logger = LogFactory.getLog(RedisCredentialsCheck.class);

	private final Environment environment;

	/**
	 * Create the check.
	 * @param environment where the Redis properties are read
	 */
	public RedisCredentialsCheck(Environment environment) {
		this.environment = environment;
	}

	/**
	 * Warn when {@code spring.data.redis.url} and {@code spring.data.redis.username} name
	 * different users.
	 */
	public void verify() {
		String url = this.environment.getProperty("spring.data.redis.url");
		String username = this.environment.getProperty("spring.data.redis.username");
		if (!StringUtils.hasText(url) || !StringUtils.hasText(username)) {
			return;
		}
		String urlUser = userOf(url);
		if (username.equals((urlUser != null) ? urlUser : "default")) {
			return;
		}
		logger.warn("spring.data.redis.username is '" + username + "', but spring.data.redis.url is set too and its "
				+ "credentials win: the application connects to Redis as "
				+ ((urlUser != null && !"default".equals(urlUser)) ? "'" + urlUser + "'" : "the default user")
				+ ". Put the user in the URL (redis://" + username
				+ ":<password>@host:port) or configure host, port, username and password without a URL");
	}

	/**
	 * The user a Redis URL authenticates as: the user part of its user info, or
	 * {@code default} when it carries a password only ({@code redis://:secret@host}) or
	 * none at all.
	 * @param url the URL
	 * @return the user, or {@code null} when the URL carries no credentials or cannot be
	 * parsed
	 */
	private static @Nullable String userOf(String url) {
		try {
			String userInfo = new URI(url).getRawUserInfo();
			if (userInfo == null) {
				return null;
			}
			int colon = userInfo.indexOf(':');
			String user = (colon >= 0) ? userInfo.substring(0, colon) : userInfo;
			// redis://secret@host is a password in Lettuce's reading, not a user.
			if (colon < 0 || user.isEmpty()) {
				return "default";
			}
			return URLDecoder.decode(user, StandardCharsets.UTF_8);
		}
		catch (URISyntaxException ex) {
			// Spring Boot reports an invalid URL itself.
			return null;
		}
	}

}
