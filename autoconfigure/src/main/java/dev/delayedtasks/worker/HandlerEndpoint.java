package dev.delayedtasks.worker;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.time.Duration;

import dev.delayedtasks.TaskContext;
import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;
import org.springframework.util.ReflectionUtils;

/**
 * One {@code @DelayedTaskHandler} method, resolved and validated: where to call it, what
 * its payload is, and how it runs.
 *
 * @param id the handler id
 * @param queue the queue
 * @param bean the bean (a proxy when the bean is proxied, so advice such as transactions
 * applies)
 * @param method the method to invoke on {@code bean}
 * @param payloadType the declared payload type, or {@code null} when the method takes
 * only the context
 * @param payloadIndex the payload's parameter index, or -1
 * @param contextIndex the context's parameter index, or -1
 * @param concurrency how many tasks run at once on this instance
 * @param timeout the longest run, or {@code null}
 * @param retryPolicy which failures are retried and with what back-off
 * @param retryPolicyFromBean whether the policy is a bean the handler named (its max
 * retries then set the max attempts of tasks this application schedules on the queue)
 * @param autoStartup whether it starts with the application
 * @author delayed-tasks
 * @since 0.1.0
 */
public record HandlerEndpoint(String id, String queue, Object bean, Method method, @Nullable Type payloadType,
		int payloadIndex, int contextIndex, int concurrency, @Nullable Duration timeout, RetryPolicy retryPolicy,
		boolean retryPolicyFromBean, boolean autoStartup) {

	/**
	 * Call the handler.
	 * @param payload the converted payload (ignored when the method takes none)
	 * @param context the run's context
	 * @throws Throwable whatever the handler throws
	 */
	public void invoke(@Nullable Object payload, TaskContext context) throws Throwable {
		Object[] args = new Object[this.method.getParameterCount()];
		if (this.payloadIndex >= 0) {
			args[this.payloadIndex] = payload;
		}
		if (this.contextIndex >= 0) {
			args[this.contextIndex] = context;
		}
		try {
			ReflectionUtils.makeAccessible(this.method);
			this.method.invoke(this.bean, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getTargetException();
		}
	}

	@Override
	public String toString() {
		return this.id + " (queue '" + this.queue + "', " + this.method.toGenericString() + ")";
	}

}
