package dev.delayedtasks.internal.annotation;

import java.lang.reflect.Method;
import java.util.List;

import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.annotation.Recurring;
import dev.delayedtasks.internal.recurring.RecurringDeclarations;
import dev.delayedtasks.internal.recurring.ScheduleDeclaration;

import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;

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
		extends AbstractAnnotatedMethodPostProcessor<Recurring, RecurringAnnotationBeanPostProcessor.Found> {

	/**
	 * Create the post-processor.
	 */
	public RecurringAnnotationBeanPostProcessor() {
		super(Recurring.class);
	}

	@Override
	void register(ConfigurableBeanFactory beanFactory, List<Found> schedules) {
		RecurringDeclarations declarations = beanFactory.getBean(RecurringDeclarations.class);
		for (Found schedule : schedules) {
			try {
				declarations.add(schedule.declaration());
			}
			catch (IllegalStateException | IllegalArgumentException ex) {
				throw new BeanInitializationException(ex.getMessage());
			}
		}
	}

	@Override
	Found read(Object bean, String beanName, Method method, Recurring recurring) {
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
			declaration.toSchedule();
			return new Found(declaration);
		}
		catch (IllegalArgumentException ex) {
			throw new BeanInitializationException(ex.getMessage());
		}
	}

	record Found(ScheduleDeclaration declaration) {

	}

}
