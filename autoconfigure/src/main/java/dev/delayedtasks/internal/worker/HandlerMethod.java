package dev.delayedtasks.internal.worker;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;

import dev.delayedtasks.TaskContext;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;

/**
 * A handler method and the bean it is called on: which parameter takes the payload, of
 * what declared type, and which takes the {@link TaskContext}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class HandlerMethod {

	private final Object bean;

	private final Method method;

	private final @Nullable Type payloadType;

	private final int payloadIndex;

	private final int contextIndex;

	private HandlerMethod(Object bean, Method method, @Nullable Type payloadType, int payloadIndex, int contextIndex) {
		this.bean = bean;
		this.method = method;
		this.payloadType = payloadType;
		this.payloadIndex = payloadIndex;
		this.contextIndex = contextIndex;
	}

	/**
	 * Check a method's signature and prepare it to be called on a bean.
	 * @param bean the bean (a proxy when the bean is proxied, so that advice such as
	 * transactions applies)
	 * @param method the annotated method, as declared on the bean's target class
	 * @return the handler method
	 * @throws IllegalArgumentException naming the rule the method breaks: not static, and
	 * taking {@code (P payload)}, {@code (P payload, TaskContext context)} or
	 * {@code (TaskContext context)}; a return value is the task's result
	 */
	public static HandlerMethod of(Object bean, Method method) {
		if (Modifier.isStatic(method.getModifiers())) {
			throw new IllegalArgumentException("the method must not be static");
		}
		Type[] parameters = method.getGenericParameterTypes();
		Class<?>[] raw = method.getParameterTypes();
		if (parameters.length == 1) {
			return (raw[0] == TaskContext.class) ? invocable(bean, method, null, -1, 0)
					: invocable(bean, method, parameters[0], 0, -1);
		}
		if (parameters.length == 2 && raw[0] != TaskContext.class && raw[1] == TaskContext.class) {
			return invocable(bean, method, parameters[0], 0, 1);
		}
		throw new IllegalArgumentException("the signature " + method.toGenericString()
				+ " is not supported: use (P payload), (P payload, TaskContext context) or (TaskContext context)");
	}

	private static HandlerMethod invocable(Object bean, Method method, @Nullable Type payloadType, int payloadIndex,
			int contextIndex) {
		return new HandlerMethod(bean, AopUtils.selectInvocableMethod(method, bean.getClass()), payloadType,
				payloadIndex, contextIndex);
	}

	/**
	 * The bean the method is called on.
	 * @return the bean
	 */
	public Object bean() {
		return this.bean;
	}

	/**
	 * The method to invoke on {@link #bean()}.
	 * @return the method
	 */
	public Method method() {
		return this.method;
	}

	/**
	 * The declared payload type, generics included.
	 * @return the type, or {@code null} when the method takes only the context
	 */
	public @Nullable Type payloadType() {
		return this.payloadType;
	}

	/**
	 * Call the method.
	 * @param payload the converted payload (ignored when the method takes none)
	 * @param context the run's context
	 * @return what the method returned, {@code null} for a {@code void} method
	 * @throws Throwable whatever the method throws
	 */
	public @Nullable Object invoke(@Nullable Object payload, TaskContext context) throws Throwable {
		Object[] args = new Object[this.method.getParameterCount()];
		if (this.payloadIndex >= 0) {
			args[this.payloadIndex] = payload;
		}
		if (this.contextIndex >= 0) {
			args[this.contextIndex] = context;
		}
		try {
			ReflectionUtils.makeAccessible(this.method);
			return this.method.invoke(this.bean, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getTargetException();
		}
	}

	@Override
	public String toString() {
		return this.method.toGenericString();
	}

}
