package dev.delayedtasks.dashboard;

import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A user agent for a running application: an HTTP session of its own (it keeps its
 * cookies), an optional HTTP Basic login sent with every request, any method, any raw
 * path. {@link #write} sends what the dashboard's page sends with a write: the
 * dashboard's header and the session's CSRF token.
 */
final class Http {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final Pattern LOGIN_TOKEN = Pattern.compile("name=\"_csrf\"[^>]*value=\"([^\"]+)\"");

	private final int port;

	private final HttpClient client;

	private final @Nullable String user;

	private Http(int port, HttpClient client, @Nullable String user) {
		this.port = port;
		this.client = client;
		this.user = user;
	}

	/**
	 * A new session without a login.
	 * @param context the application
	 * @return the user agent
	 */
	static Http anonymous(ConfigurableApplicationContext context) {
		return as(context, null);
	}

	/**
	 * A new session that sends a user's Basic credentials.
	 * @param context the application
	 * @param user the user, or {@code null} for none
	 * @return the user agent
	 */
	static Http as(ConfigurableApplicationContext context, @Nullable String user) {
		return new Http(((WebServerApplicationContext) context).getWebServer().getPort(),
				// HTTP/1.1 as browsers speak it over plain http: the JDK client would
				// otherwise offer an h2c upgrade on each new connection.
				HttpClient.newBuilder()
					.version(HttpClient.Version.HTTP_1_1)
					.connectTimeout(Duration.ofSeconds(5))
					.cookieHandler(new CookieManager())
					.build(),
				user);
	}

	/**
	 * The same session (cookies) with another login.
	 * @param user the user, or {@code null} for none
	 * @return the user agent
	 */
	Http withLogin(@Nullable String user) {
		return new Http(this.port, this.client, user);
	}

	URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	HttpResponse<String> get(String path) throws Exception {
		return send("GET", path, Map.of());
	}

	/**
	 * A bare POST: no token, no header of the dashboard.
	 * @param path the path
	 * @return the response
	 * @throws Exception when it cannot be sent
	 */
	HttpResponse<String> post(String path) throws Exception {
		return send("POST", path, Map.of());
	}

	/**
	 * A write as the dashboard's page sends it, with its header and the session's CSRF
	 * token (read from {@code api/session}, as the page reads it).
	 * @param dashboard where the dashboard is, such as {@code /delayed-tasks}
	 * @param path the path
	 * @return the response
	 * @throws Exception when it cannot be sent
	 */
	HttpResponse<String> write(String dashboard, String path) throws Exception {
		return send("POST", path, pageHeaders(dashboard));
	}

	/**
	 * A write with a JSON body as the dashboard's page sends it.
	 * @param dashboard where the dashboard is
	 * @param path the path
	 * @param body the JSON body
	 * @return the response
	 * @throws Exception when it cannot be sent
	 */
	HttpResponse<String> write(String dashboard, String path, String body) throws Exception {
		Map<String, String> headers = new LinkedHashMap<>(pageHeaders(dashboard));
		headers.put("Content-Type", "application/json");
		return send("POST", path, headers, body);
	}

	/**
	 * The headers the page sends with a write: the dashboard's header and, when the
	 * session has one, the CSRF token.
	 * @param dashboard where the dashboard is
	 * @return the headers
	 * @throws Exception when the session cannot be read
	 */
	Map<String, String> pageHeaders(String dashboard) throws Exception {
		HttpResponse<String> response = get(dashboard + "/api/session");
		if (response.statusCode() != 200) {
			throw new IllegalStateException("No session: " + response.statusCode() + " " + response.body());
		}
		JsonNode session = json(response);
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put(session.get("writeHeader").asString(), "1");
		JsonNode csrf = session.get("csrf");
		if (csrf != null && !csrf.isNull()) {
			headers.put(csrf.get("headerName").asString(), csrf.get("token").asString());
		}
		return headers;
	}

	/**
	 * The CSRF token of this session, as the page reads it.
	 * @param dashboard where the dashboard is
	 * @return the token
	 * @throws Exception when the session cannot be read
	 */
	String csrfToken(String dashboard) throws Exception {
		return pageHeaders(dashboard).get("X-CSRF-TOKEN");
	}

	/**
	 * Log in through the application's form login (Spring Security's generated page and
	 * its token).
	 * @param contextPath the application's context path, or {@code ""}
	 * @param user the user
	 * @throws Exception when the login fails
	 */
	void formLogin(String contextPath, String user) throws Exception {
		String page = get(contextPath + "/login").body();
		Matcher token = LOGIN_TOKEN.matcher(page);
		if (!token.find()) {
			throw new IllegalStateException("No token on the login page: " + page);
		}
		HttpResponse<String> response = send("POST", contextPath + "/login",
				Map.of("Content-Type", "application/x-www-form-urlencoded"),
				"username=" + user + "&password=" + DashboardTestApplications.password(user) + "&_csrf="
						+ URLEncoder.encode(token.group(1), StandardCharsets.UTF_8));
		if (response.statusCode() != 302 || response.headers().firstValue("Location").orElse("").contains("error")) {
			throw new IllegalStateException("Login failed: " + response.statusCode() + " " + response.headers().map());
		}
	}

	HttpResponse<String> send(String method, String path, Map<String, String> headers) throws Exception {
		return send(method, path, headers, null);
	}

	HttpResponse<String> send(String method, String path, Map<String, String> headers, @Nullable String body)
			throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.timeout(Duration.ofSeconds(30))
			.method(method,
					(body != null) ? HttpRequest.BodyPublishers.ofString(body) : HttpRequest.BodyPublishers.noBody())
			.header("Accept", "application/json");
		if (this.user != null) {
			String credentials = this.user + ":" + DashboardTestApplications.password(this.user);
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		headers.forEach(request::setHeader);
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * A query string, its values encoded.
	 * @param namesAndValues name, value, name, value...
	 * @return the query, starting with {@code ?}
	 */
	static String query(String... namesAndValues) {
		StringJoiner query = new StringJoiner("&", "?", "");
		for (int i = 0; i < namesAndValues.length; i += 2) {
			query.add(namesAndValues[i] + "=" + URLEncoder.encode(namesAndValues[i + 1], StandardCharsets.UTF_8));
		}
		return query.toString();
	}

	static JsonNode json(HttpResponse<String> response) {
		return json.readTree(response.body());
	}

}
