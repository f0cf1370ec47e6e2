package dev.delayedtasks.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.delayedtasks.internal.testing.DelayedTasksExtension;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A plain JUnit test of handlers and code that schedules tasks, without
 * {@code @SpringBootTest}: the test class gets a small application context of its own
 * with the given classes, delayed-tasks and everything {@link AutoConfigureDelayedTasks}
 * gives (a Redis, a key prefix of its own, a {@link DelayedTasksTester}), created before
 * its first test and closed after its last. Test methods declare what they need as
 * parameters: any bean of that context, such as {@code DelayedTaskScheduler},
 * {@code DelayedTasksTester} or a handler.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(DelayedTasksExtension.class)
public @interface DelayedTasksTest {

	/**
	 * The classes of the context: handler beans, configuration classes, what the handlers
	 * need.
	 * @return the classes
	 */
	Class<?>[] classes() default {};

	/**
	 * Properties of the context, as {@code key=value}, for example
	 * {@code delayed-tasks.retry.max-retries=1}.
	 * @return the properties
	 */
	String[] properties() default {};

}
