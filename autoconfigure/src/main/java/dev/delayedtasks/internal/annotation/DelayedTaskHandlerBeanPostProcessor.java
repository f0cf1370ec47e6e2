package dev.delayedtasks.internal.annotation;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.worker.HandlerEndpoint;
import dev.delayedtasks.internal.worker.HandlerMethod;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.util.StringUtils;

/**
 * Finds {@link DelayedTaskHandler} methods on beans (proxied ones included), reads and
 * checks their attributes, and registers them with the {@link DelayedTaskHandlerRegistry}
 * (the bean named {@value DelayedTaskHandlerRegistry#BEAN_NAME}) once all singletons
 * exist. Anything invalid fails startup with a message naming the bean, the method and
 * the rule. An attribute the annotation leaves open stays open in the
 * {@link HandlerEndpoint}: the registry's
 * {@link dev.delayedtasks.internal.worker.HandlerContainerFactory} fills it from the
 * queue's configuration. Modelled on Spring Data Redis's
 * {@code RedisListenerAnnotationBeanPostProcessor}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DelayedTaskHandlerBeanPostProcessor
		extends AbstractAnnotatedMethodPostProcessor<DelayedTaskHandler, HandlerEndpoint> {

	/**
	 * Create the post-processor.
	 */
	public DelayedTaskHandlerBeanPostProcessor() {
		super(DelayedTaskHandler.class);
	}

	@Override
	void register(ConfigurableBeanFactory beanFactory, List<HandlerEndpoint> endpoints) {
		DelayedTaskHandlerRegistry registry = beanFactory.getBean(DelayedTaskHandlerRegistry.BEAN_NAME,
				DelayedTaskHandlerRegistry.class);
		endpoints.forEach(registry::register);
	}

	/**
	 * Read and check a handler's annotation. A retry policy bean is only checked by name
	 * and type here: it may be declared by the bean being post-processed, which cannot
	 * produce beans yet, so the container factory looks it up when it creates the
	 * handler's container.
	 * @param bean the bean that declares the handler
	 * @param beanName the bean's name
	 * @param method the annotated method
	 * @param annotation the annotation on it
	 * @return the handler's endpoint
	 */
	@Override
	HandlerEndpoint read(Object bean, String beanName, Method method, DelayedTaskHandler annotation) {
		String where = "@DelayedTaskHandler on " + beanName + "#" + method.getName() + ": ";
		HandlerMethod handlerMethod;
		try {
			handlerMethod = HandlerMethod.of(bean, method);
		}
		catch (IllegalArgumentException ex) {
			throw new BeanInitializationException(where + ex.getMessage());
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
		String id = StringUtils.hasText(annotation.id()) ? resolve(annotation.id()) : beanName + "." + method.getName();
		String policyBean = resolve(annotation.retryPolicy());
		if (StringUtils.hasText(policyBean)) {
			checkRetryPolicyBean(where, policyBean);
		}
		return HandlerEndpoint.builder(id, queue, handlerMethod)
			.concurrency(concurrency(where, annotation))
			.timeout(timeout(where, annotation))
			.retryPolicyBeanName(StringUtils.hasText(policyBean) ? policyBean : null)
			.autoStartup(autoStartup(where, annotation))
			.build();
	}

	private @Nullable Integer concurrency(String where, DelayedTaskHandler annotation) {
		String value = resolve(annotation.concurrency());
		if (!StringUtils.hasText(value)) {
			return null;
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

	private @Nullable Duration timeout(String where, DelayedTaskHandler annotation) {
		String value = resolve(annotation.timeout());
		if (!StringUtils.hasText(value)) {
			return null;
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

	private void checkRetryPolicyBean(String where, String name) {
		ConfigurableBeanFactory beanFactory = beanFactory();
		if (beanFactory == null || !beanFactory.containsBean(name)) {
			throw new BeanInitializationException(where + "retryPolicy names the bean '" + name
					+ "', but there is no such bean: declare a RetryPolicy bean with that name");
		}
		// By type, without creating the bean: it may be declared by the bean being
		// post-processed, which cannot produce beans yet.
		if (!beanFactory.isTypeMatch(name, RetryPolicy.class)) {
			Class<?> type = beanFactory.getType(name);
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

}
