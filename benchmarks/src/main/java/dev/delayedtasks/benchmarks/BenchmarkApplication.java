package dev.delayedtasks.benchmarks;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.context.annotation.Bean;

/**
 * The benchmarks' entry point: runs the workloads named by {@code --workload} against
 * {@code --redis-url} (or a private local Redis), prints one line per workload and writes
 * an HTML report, then exits with 1 when any task started early, was lost or ran twice.
 *
 * @author delayed-tasks
 * @since 0.1.0
 * @see BenchmarkRunner
 */
@SpringBootApplication
@EnableConfigurationProperties(BenchmarkProperties.class)
public class BenchmarkApplication {

	@Bean
	RedisCallCounter redisCallCounter() {
		return new RedisCallCounter();
	}

	@Bean
	ClientResourcesBuilderCustomizer redisCallCounting(RedisCallCounter counter) {
		return (resources) -> resources.commandLatencyRecorder(counter);
	}

	/**
	 * Run the benchmarks.
	 * @param args for example
	 * {@code --workload=delayed --redis-url=redis://127.0.0.1:6379}
	 */
	public static void main(String[] args) {
		System.exit(SpringApplication.exit(SpringApplication.run(BenchmarkApplication.class, args)));
	}

}
