package dev.delayedtasks.internal.annotation;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.StringUtils;

/**
 * What the annotation post-processors share: find a bean's methods that carry the
 * annotation (proxied beans included), read each into a declaration while the bean is
 * initialized, so that an invalid one fails startup naming its bean, and hand all
 * declarations over once every singleton exists. Classes without the annotation are
 * remembered, so that prototypes are not introspected again.
 *
 * @param <A> the annotation
 * @param <D> what one annotated method declares
 * @author delayed-tasks
 * @since 0.1.0
 */
abstract class AbstractAnnotatedMethodPostProcessor<A extends Annotation, D>
		implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware {

	private final Class<A> annotationType;

	private final Set<Class<?>> classesWithoutAnnotation = ConcurrentHashMap.newKeySet();

	private final List<D> declarations = new ArrayList<>();

	private @Nullable ConfigurableBeanFactory beanFactory;

	private @Nullable EmbeddedValueResolver resolver;

	AbstractAnnotatedMethodPostProcessor(Class<A> annotationType) {
		this.annotationType = annotationType;
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
		if (this.classesWithoutAnnotation.contains(targetClass)
				|| !AnnotationUtils.isCandidateClass(targetClass, this.annotationType)) {
			return bean;
		}
		Map<Method, A> methods = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<A>) (method) -> AnnotatedElementUtils.findMergedAnnotation(method,
						this.annotationType));
		if (methods.isEmpty()) {
			this.classesWithoutAnnotation.add(targetClass);
			return bean;
		}
		methods.forEach((method, annotation) -> {
			D declaration = read(bean, beanName, method, annotation);
			synchronized (this.declarations) {
				this.declarations.add(declaration);
			}
		});
		return bean;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (this.beanFactory == null) {
			return;
		}
		List<D> found;
		synchronized (this.declarations) {
			found = List.copyOf(this.declarations);
			this.declarations.clear();
		}
		// Outside the lock: registering creates beans, which may run this post-processor.
		register(this.beanFactory, found);
	}

	/**
	 * Read and check one annotated method.
	 * @param bean the bean that declares it
	 * @param beanName the bean's name
	 * @param method the method
	 * @param annotation the annotation on it
	 * @return what it declares
	 * @throws org.springframework.beans.factory.BeanInitializationException naming the
	 * bean, the method and the problem when the declaration is invalid
	 */
	abstract D read(Object bean, String beanName, Method method, A annotation);

	/**
	 * Hand over the declarations found, once every singleton exists.
	 * @param beanFactory the bean factory
	 * @param declarations the declarations, in the order they were found
	 */
	abstract void register(ConfigurableBeanFactory beanFactory, List<D> declarations);

	/**
	 * The bean factory, once it is known.
	 * @return the bean factory, or {@code null} outside a configurable one
	 */
	final @Nullable ConfigurableBeanFactory beanFactory() {
		return this.beanFactory;
	}

	/**
	 * Resolve an attribute's {@code ${...}} placeholders and SpEL expressions.
	 * @param value the attribute's value
	 * @return the resolved value, or {@code ""} when it resolves to nothing
	 */
	final String resolve(String value) {
		if (this.resolver == null || !StringUtils.hasText(value)) {
			return value;
		}
		String resolved = this.resolver.resolveStringValue(value);
		return (resolved != null) ? resolved : "";
	}

}
