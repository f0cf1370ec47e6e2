package dev.delayedtasks.annotation;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.recurring.RecurringDeclarations;
import dev.delayedtasks.recurring.ScheduleDeclaration;
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
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.StringUtils;

/**
 * Finds {@link Recurring} methods on beans, checks that each is a
 * {@link DelayedTaskHandler} (whose queue the schedule's occurrences go to) and that its
 * schedule is valid, and hands the schedules to {@link RecurringDeclarations} once all
 * singletons exist. Anything invalid fails startup with a message naming the bean, the
 * method, the schedule and the problem.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class RecurringAnnotationBeanPostProcessor
		implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware {

	private final Set<Class<?>> classesWithoutSchedules = ConcurrentHashMap.newKeySet();

	private final List<Found> found = new ArrayList<>();

	private @Nullable ConfigurableBeanFactory beanFactory;

	private @Nullable EmbeddedValueResolver resolver;

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
		if (this.classesWithoutSchedules.contains(targetClass)
				|| !AnnotationUtils.isCandidateClass(targetClass, Recurring.class)) {
			return bean;
		}
		Map<Method, Recurring> methods = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<Recurring>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, Recurring.class));
		if (methods.isEmpty()) {
			this.classesWithoutSchedules.add(targetClass);
			return bean;
		}
		methods.forEach((method, recurring) -> {
			Found schedule = schedule(beanName, method, recurring);
			synchronized (this.found) {
				this.found.add(schedule);
			}
		});
		return bean;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (this.beanFactory == null) {
			return;
		}
		RecurringDeclarations declarations = this.beanFactory.getBean(RecurringDeclarations.class);
		synchronized (this.found) {
			for (Found schedule : this.found) {
				try {
					declarations.add(schedule.schedule(), schedule.where());
				}
				catch (IllegalStateException ex) {
					throw new BeanInitializationException(ex.getMessage());
				}
			}
			this.found.clear();
		}
	}

	private Found schedule(String beanName, Method method, Recurring recurring) {
		String where = "@Recurring on " + beanName + "#" + method.getName();
		DelayedTaskHandler handler = AnnotatedElementUtils.findMergedAnnotation(method, DelayedTaskHandler.class);
		if (handler == null) {
			throw new BeanInitializationException(where + ": the method must also be a @DelayedTaskHandler, "
					+ "whose queue the schedule's occurrences go to");
		}
		ScheduleDeclaration declaration = new ScheduleDeclaration(where, resolve(recurring.id()),
				resolve(handler.queue()), resolve(recurring.cron()), resolve(recurring.fixedRate()),
				resolve(recurring.zone()), resolve(recurring.payload()), resolve(recurring.misfire()),
				resolve(recurring.misfireBound()), resolve(recurring.misfireThreshold()), resolve(recurring.overlap()));
		try {
			return new Found(declaration.toSchedule(), where);
		}
		catch (IllegalArgumentException ex) {
			throw new BeanInitializationException(ex.getMessage());
		}
	}

	private String resolve(String value) {
		if (this.resolver == null || !StringUtils.hasText(value)) {
			return value;
		}
		String resolved = this.resolver.resolveStringValue(value);
		return (resolved != null) ? resolved : "";
	}

	private record Found(RecurringSchedule schedule, String where) {

	}

}
