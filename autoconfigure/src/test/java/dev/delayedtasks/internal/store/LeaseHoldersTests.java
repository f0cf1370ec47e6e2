package dev.delayedtasks.internal.store;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LeaseHolders}: the tag of an instance survives into the tokens of its claims and
 * hand-offs, loops of one instance get nonces of their own, and tokens or ids made
 * otherwise name no holder.
 */
class LeaseHoldersTests {

	@Test
	void theTokensOfAnInstancesClaimsAndHandOffsCarryItsTag() {
		String instance = LeaseHolders.newInstanceId();
		assertThat(instance).startsWith(ProcessHandle.current().pid() + "-");
		String tag = LeaseHolders.tagOfInstance(instance);
		assertThat(tag).hasSize(8);
		String first = LeaseHolders.loopNonce(instance, 1);
		String second = LeaseHolders.loopNonce(instance, 36);
		assertThat(first).isNotEqualTo(second).doesNotContain(".", "-", ":");
		assertThat(LeaseHolders.tagOfToken(first + ".5:123")).as("a claim's token").isEqualTo(tag);
		assertThat(LeaseHolders.tagOfToken(second + "-h2:124")).as("a hand-off's token").isEqualTo(tag);
		assertThat(LeaseHolders.tagOfInstance(LeaseHolders.newInstanceId())).isNotEqualTo(tag);
	}

	@Test
	void tokensAndIdsMadeOtherwiseNameNoHolder() {
		assertThat(LeaseHolders.tagOfToken(null)).isNull();
		assertThat(LeaseHolders.tagOfToken("short")).isNull();
		assertThat(LeaseHolders.tagOfToken("XYZ-not-hex:1")).isNull();
		assertThat(LeaseHolders.tagOfInstance("worker-1")).isNull();
		String nonce = LeaseHolders.loopNonce("worker-1", 1);
		assertThat(nonce).as("a random tag, matching no instance").matches("[0-9a-f]{8}1");
	}

}
