package dev.delayedtasks.annotation;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerEndpoint;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

/**
 * Finds {@link DelayedTaskHandler} methods on beans (proxied ones included), checks their
 * signatures and attributes, and registers them with the
 * {@link DelayedTaskHandlerRegistry} once all singletons exist. Anything invalid fails
 * startup with a message naming the bean, the method and the rule. Modelled on Spring
 * Data Redis's {@code RedisListenerAnnotationBeanPostProcessor}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DelayedTaskHandlerBeanPostProcessor
		implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware {

	private final HandlerDefaults defaults;

	private final Set<Class<?>> classesWithoutHandlers = ConcurrentHashMap.newKeySet();

	private final List<Supplier<HandlerEndpoint>> endpoints = new ArrayList<>();

	private @Nullable ConfigurableBeanFactory beanFactory;

	private @Nullable EmbeddedValueResolver resolver;

	/**
	 * Create a post-processor.
	 * @param defaults settings for attributes a handler leaves empty
	 */
	public DelayedTaskHandlerBeanPostProcessor(HandlerDefaults defaults) {
		this.defaults = defaults;
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		if (beanFactory instanceof ConfigurableBeanFactory configurable) {
			this.beanFactory = configurable;
			this.resolver = new EmbeddedValueResolver(configurable);
		}
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		if (this.classesWithoutHandlers.contains(targetClass)
				|| !AnnotationUtils.isCandidateClass(targetClass, DelayedTaskHandler.class)) {
			return bean;
		}
		Map<Method, DelayedTaskHandler> methods = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<DelayedTaskHandler>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, DelayedTaskHandler.class));
		if (methods.isEmpty()) {
			this.classesWithoutHandlers.add(targetClass);
			return bean;
		}
		methods.forEach((method, annotation) -> {
			synchronized (this.endpoints) {
				this.endpoints.add(endpoint(bean, beanName, method, annotation));
			}
		});
		return bean;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (this.beanFactory == null) {
			return;
		}
		DelayedTaskHandlerRegistry registry = this.beanFactory.getBean(DelayedTaskHandlerRegistry.class);
		synchronized (this.endpoints) {
			this.endpoints.forEach((endpoint) -> registry.register(endpoint.get()));
			this.endpoints.clear();
		}
	}

	/**
	 * Check a handler now; create its endpoint once all singletons exist, so that a retry
	 * policy bean can be declared anywhere, even beside the handler in the bean being
	 * post-processed.
	 */
	private Supplier<HandlerEndpoint> endpoint(Object bean, String beanName, Method method,
			DelayedTaskHandler annotation) {
		String where = "@DelayedTaskHandler on " + beanName + "#" + method.getName() + ": ";
		if (Modifier.isStatic(method.getModifiers())) {
			throw new BeanInitializationException(where + "the method must not be static");
		}
		if (method.getReturnType() != void.class) {
			throw new BeanInitializationException(where + "the method must return void (a return value would be lost)");
		}
		String queue = resolve(annotation.queue());
		if (!StringUtils.hasText(queue)) {
			throw new BeanInitializationException(where + "name the queue with queue = \"...\" (or value)");
		}
		try {
			Names.checkQueue(queue);
		}
		catch (InvalidTaskRequestException ex) {
			throw new BeanInitializationException(where + ex.getMessage());
		}
		Type[] parameters = method.getGenericParameterTypes();
		Class<?>[] rawParameters = method.getParameterTypes();
		int payloadIndex = -1;
		int contextIndex = -1;
		if (parameters.length == 1) {
			if (rawParameters[0] == TaskContext.class) {
				contextIndex = 0;
			}
			else {
				payloadIndex = 0;
			}
		}
		else if (parameters.length == 2 && rawParameters[0] != TaskContext.class
				&& rawParameters[1] == TaskContext.class) {
			payloadIndex = 0;
			contextIndex = 1;
		}
		else {
			throw new BeanInitializationException(where + "the signature " + method.toGenericString()
					+ " is not supported: use (P payload), (P payload, TaskContext context) or (TaskContext context)");
		}
		String id = StringUtils.hasText(annotation.id()) ? resolve(annotation.id()) : beanName + "." + method.getName();
		int concurrency = concurrency(where, annotation, queue);
		Duration timeout = timeout(where, annotation, queue);
		String policyBean = resolve(annotation.retryPolicy());
		boolean fromBean = StringUtils.hasText(policyBean);
		Supplier<RetryPolicy> policy;
		if (fromBean) {
			checkRetryPolicyBean(where, policyBean);
			policy = retryPolicyBean(policyBean);
		}
		else {
			RetryPolicy queueDefault = this.defaults.retryPolicy(queue);
			policy = () -> queueDefault;
		}
		boolean autoStartup = autoStartup(where, annotation);
		Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
		Type payloadType = (payloadIndex >= 0) ? parameters[payloadIndex] : null;
		int payloadAt = payloadIndex;
		int contextAt = contextIndex;
		return () -> new HandlerEndpoint(id, queue, bean, invocable, payloadType, payloadAt, contextAt, concurrency,
				timeout, policy.get(), fromBean, autoStartup);
	}

	private int concurrency(String where, DelayedTaskHandler annotation, String queue) {
		String value = resolve(annotation.concurrency());
		if (!StringUtils.hasText(value)) {
			return this.defaults.concurrency(queue);
		}
		try {
			int concurrency = Integer.parseInt(value.trim());
			if (concurrency >= 1) {
				return concurrency;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new BeanInitializationException(
				where + "concurrency '" + value + "' must be a whole number of at least 1");
	}

	private @Nullable Duration timeout(String where, DelayedTaskHandler annotation, String queue) {
		String value = resolve(annotation.timeout());
		if (!StringUtils.hasText(value)) {
			return this.defaults.timeout(queue);
		}
		try {
			Duration timeout = DurationStyle.detectAndParse(value.trim());
			if (!timeout.isNegative() && !timeout.isZero()) {
				return timeout;
			}
		}
		catch (IllegalArgumentException ex) {
			// reported below
		}
		throw new BeanInitializationException(
				where + "timeout '" + value + "' must be a positive duration such as 30s, 5m or PT30S");
	}

	private Supplier<RetryPolicy> retryPolicyBean(String name) {
		ConfigurableBeanFactory factory = this.beanFactory;
		Assert.state(factory != null, "No bean factory");
		return () -> factory.getBean(name, RetryPolicy.class);
	}

	private void checkRetryPolicyBean(String where, String name) {
		if (this.beanFactory == null || !this.beanFactory.containsBean(name)) {
			throw new BeanInitializationException(where + "retryPolicy names the bean '" + name
					+ "', but there is no such bean: declare a RetryPolicy bean with that name");
		}
		// By type, without creating the bean: it may be declared by the bean being
		// post-processed, which cannot produce beans yet.
		if (!this.beanFactory.isTypeMatch(name, RetryPolicy.class)) {
			Class<?> type = this.beanFactory.getType(name);
			throw new BeanInitializationException(where + "retryPolicy names the bean '" + name + "', which is a "
					+ ((type != null) ? type.getName() : "bean of unknown type")
					+ ", not an org.springframework.core.retry.RetryPolicy");
		}
	}

	private boolean autoStartup(String where, DelayedTaskHandler annotation) {
		String value = resolve(annotation.autoStartup());
		if (!StringUtils.hasText(value) || "true".equalsIgnoreCase(value.trim())) {
			return true;
		}
		if ("false".equalsIgnoreCase(value.trim())) {
			return false;
		}
		throw new BeanInitializationException(where + "autoStartup '" + value + "' must be true or false");
	}

	private String resolve(String value) {
		if (this.resolver == null || !StringUtils.hasText(value)) {
			return value;
		}
		String resolved = this.resolver.resolveStringValue(value);
		return (resolved != null) ? resolved : "";
	}

}
