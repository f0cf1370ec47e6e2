package dev.delayedtasks.internal.testing;

import dev.delayedtasks.testing.AutoConfigureDelayedTasks;
import dev.delayedtasks.testing.DelayedTasksTester;

import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.support.AbstractTestExecutionListener;

/**
 * Internal: {@linkplain DelayedTasksTester#clear() clears} the tester of a test class
 * annotated with {@code @AutoConfigureDelayedTasks} after each test method, so the next
 * test (of this class, or of another class that shares the cached context) starts with no
 * tasks, no recorded runs and the real clock.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DelayedTasksTestExecutionListener extends AbstractTestExecutionListener {

	@Override
	public int getOrder() {
		// After the application's own listeners' afterTestMethod work (they run in
		// reverse
		// order): a transactional rollback or a mock reset comes first.
		return 1000;
	}

	@Override
	public void afterTestMethod(TestContext testContext) {
		if (TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), AutoConfigureDelayedTasks.class)
				&& testContext.hasApplicationContext()) {
			testContext.getApplicationContext()
				.getBeanProvider(DelayedTasksTester.class)
				.ifAvailable(DelayedTasksTester::clear);
		}
	}

}
