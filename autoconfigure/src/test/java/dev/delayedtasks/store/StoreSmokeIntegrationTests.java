package dev.delayedtasks.store;

import java.time.Duration;
import java.util.List;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@WithRedis
class StoreSmokeIntegrationTests {

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void anImmediateTaskIsClaimedAndAcknowledged() {
		TaskId id = this.fixture.scheduler.enqueue("smoke", new Greeting("hello"));
		ClaimBatch batch = this.fixture.store.claim("smoke", 4, "n1");
		assertThat(batch.tasks()).singleElement().satisfies((task) -> {
			assertThat(task.id()).isEqualTo(id);
			assertThat(task.token()).isEqualTo("n1:1");
			assertThat(task.envelope()).isEqualTo("{\"h\":{},\"b\":{\"text\":\"hello\"}}");
			assertThat(task.deliveries()).isEqualTo(1);
			assertThat(task.maxAttempts()).isEqualTo(4);
		});
		assertThat(this.fixture.store.ack("smoke", List.of(batch.tasks().get(0).lease())))
			.containsExactly(TaskStore.AckOutcome.DONE);
		assertThat(this.fixture.scheduler.find("smoke", id)).isEmpty();
		assertThat(StoreInvariants.violations(this.fixture.redis, this.fixture.keys("smoke"))).isEmpty();
	}

	@Test
	void aDelayedTaskIsNotClaimedBeforeItIsDue() {
		this.fixture.scheduler.schedule("smoke-later", new Greeting("later"), Duration.ofHours(1));
		ClaimBatch batch = this.fixture.store.claim("smoke-later", 4, "n1");
		assertThat(batch.tasks()).isEmpty();
		assertThat(batch.nextDueMs()).isGreaterThan(batch.now() + Duration.ofMinutes(59).toMillis());
		assertThat(StoreInvariants.violations(this.fixture.redis, this.fixture.keys("smoke-later"))).isEmpty();
	}

	record Greeting(String text) {
	}

}
