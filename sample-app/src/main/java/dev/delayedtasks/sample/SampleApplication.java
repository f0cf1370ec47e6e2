package dev.delayedtasks.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A runnable application that shows delayed tasks at work.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@SpringBootApplication
public class SampleApplication {

	/**
	 * Start the sample.
	 * @param args command-line arguments, for example
	 * {@code --spring.data.redis.url=redis://host:6379}
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
