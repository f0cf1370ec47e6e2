package dev.delayedtasks.internal.store;

import java.time.Duration;

import dev.delayedtasks.InvalidTaskRequestException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class StoreSettingsTests {

	@Test
	void theKeyPrefixIsValidatedBeforeAnyKeyIsMadeFromIt() {
		assertThat(StoreFixture.settings("dt", Duration.ofSeconds(30), Duration.ofSeconds(5)).keys("emails").sched())
			.isEqualTo("dt:{emails:0}:sched");
		// "x{}" would make "x{}:{emails:0}:sched" hash on the whole key (an empty tag is
		// ignored), scattering one queue over several Cluster slots.
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> StoreFixture.settings("x{}", Duration.ofSeconds(30), Duration.ofSeconds(5)))
			.withMessageStartingWith("Key prefix 'x{}' is invalid: character '{' at index 1 is not allowed");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> StoreFixture.settings("my app", Duration.ofSeconds(30), Duration.ofSeconds(5)))
			.withMessageContaining("character ' ' at index 2 is not allowed");
	}

}
