package dev.delayedtasks.sample;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.time.Duration;

import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.DefaultResourceLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's quick start, compiled from the README and started on a real Redis: the
 * controller's schedule call returns an id, and the handler logs the reminder when it is
 * due. The web server is left out (the sample's class path also holds Spring Security,
 * which the quick start's does not), so the controller is called directly.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class QuickStartIntegrationTests {

	@Test
	void aScheduledReminderIsHandledWhenDue(TestRedis redis, CapturedOutput output, @TempDir Path directory)
			throws Exception {
		assertThat(QuickStart.read().compile(directory)).isEmpty();
		try (URLClassLoader loader = new URLClassLoader(new URL[] { directory.resolve("classes").toUri().toURL() },
				getClass().getClassLoader())) {
			Class<?> applicationClass = loader.loadClass("com.example.reminders.RemindersApplication");
			SpringApplication application = new SpringApplication(applicationClass);
			application.setResourceLoader(new DefaultResourceLoader(loader));
			application.setWebApplicationType(WebApplicationType.NONE);
			try (ConfigurableApplicationContext context = application.run("--spring.data.redis.url=" + redis.url(),
					"--delayed-tasks.key-prefix=" + redis.keyPrefix())) {
				Object controller = context.getBean(loader.loadClass("com.example.reminders.ReminderController"));
				Method schedule = controller.getClass().getMethod("schedule", String.class, long.class);
				String id = ((String) schedule.invoke(controller, "stretch", 1L)).strip();
				assertThat(id).matches("[0-9A-Za-z_-]{14}");
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(() -> assertThat(output).contains("Reminder " + id + ": stretch ("));
			}
		}
	}

}
