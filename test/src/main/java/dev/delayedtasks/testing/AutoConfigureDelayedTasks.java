package dev.delayedtasks.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.PropertyMapping;

/**
 * Sets a test's application context up for delayed-tasks: a Redis for the test run (the
 * {@code DELAYED_TASKS_TEST_REDIS_URL} environment variable, else a Testcontainers Redis
 * where Docker answers, else a {@code redis-server} on the {@code PATH}, else the Redis
 * 6.2 binary of {@code com.github.codemonstur:embedded-redis}), a key prefix of the
 * context's own ({@code delayed-tasks.key-prefix=dtt-<random>}), and a
 * {@link DelayedTasksTester} bean. Every key under the prefix is deleted after each test
 * method and when the context closes.
 * <p>
 * Works on {@code @SpringBootTest} classes and on slices ({@code @WebMvcTest} and the
 * like), whose auto-configurations it extends with Redis, Jackson and delayed-tasks'.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
@PropertyMapping("delayed-tasks.test")
public @interface AutoConfigureDelayedTasks {

	/**
	 * Whether to give the context a Redis found or started for the test run.
	 * {@code false} keeps the connection the application configures
	 * ({@code spring.data.redis.*}); a Redis from a Testcontainers
	 * {@code @ServiceConnection} is used in any case.
	 * @return whether to provide a Redis
	 */
	boolean provideRedis() default true;

}
