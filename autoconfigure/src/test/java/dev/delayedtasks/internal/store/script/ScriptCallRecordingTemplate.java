package dev.delayedtasks.internal.store.script;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.StringRedisConnection;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A template that hears of every script call sent on its connections (the scripts run as
 * {@code EVALSHA}/{@code EVAL} on the connection, not through the template's script
 * executor), with its keys and arguments as text.
 */
public class ScriptCallRecordingTemplate extends StringRedisTemplate {

	public ScriptCallRecordingTemplate(RedisConnectionFactory connectionFactory) {
		super(connectionFactory);
	}

	/**
	 * A script call is about to be sent.
	 * @param keys its keys
	 * @param args its arguments
	 */
	protected void onScriptCall(List<String> keys, List<String> args) {
	}

	/**
	 * A script call was answered.
	 * @param sha the SHA-1 of the script
	 * @param keys its keys
	 * @param args its arguments
	 * @param reply the reply, decoded as the store decodes it
	 */
	void onScriptReply(String sha, List<String> keys, List<String> args, List<Object> reply) {
	}

	@Override
	protected RedisConnection preProcessConnection(RedisConnection connection, boolean existingConnection) {
		RedisConnection target = super.preProcessConnection(connection, existingConnection);
		return (RedisConnection) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { StringRedisConnection.class }, (proxy, method, args) -> {
					Object result = invoke(target, method, args);
					return method.getName().equals("scriptingCommands") ? scripting((RedisScriptingCommands) result)
							: result;
				});
	}

	private RedisScriptingCommands scripting(RedisScriptingCommands target) {
		InvocationHandler handler = (proxy, method, args) -> {
			if ((method.getName().equals("evalSha") || method.getName().equals("eval")) && args.length == 4
					&& args[3] instanceof byte[][] keysAndArgs) {
				int keyCount = (int) args[2];
				List<String> keys = new ArrayList<>();
				List<String> arguments = new ArrayList<>();
				for (int i = 0; i < keysAndArgs.length; i++) {
					((i < keyCount) ? keys : arguments).add(new String(keysAndArgs[i], StandardCharsets.UTF_8));
				}
				if (method.getName().equals("evalSha")) {
					onScriptCall(keys, arguments);
				}
				Object reply = invoke(target, method, args);
				String sha = (args[0] instanceof String hex) ? hex
						: RedisScript.of(new String((byte[]) args[0], StandardCharsets.UTF_8)).getSha1();
				if (reply instanceof List<?> list) {
					onScriptReply(sha, keys, arguments, ScriptReplies.decode(list));
				}
				return reply;
			}
			return invoke(target, method, args);
		};
		return (RedisScriptingCommands) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { RedisScriptingCommands.class }, handler);
	}

	private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
