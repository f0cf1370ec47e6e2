package dev.delayedtasks.internal.store;

import java.util.UUID;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Who holds a lease, read from its token: a claim loop's nonce starts with the tag of the
 * instance that runs it, so a leased task names its holder without a write of its own in
 * the claim. Instance ids are {@code <pid>-<tag>}, the tag 8 random hex digits; a loop
 * nonce is {@code <tag><loop number in base 36>} (no {@code '.'}, {@code '-'} or
 * {@code ':'}, which separate the parts of claim nonces and tokens).
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public final class LeaseHolders {

	private static final int TAG_LENGTH = 8;

	private static final Pattern TAG = Pattern.compile("[0-9a-f]{" + TAG_LENGTH + "}");

	private LeaseHolders() {
	}

	/**
	 * A new instance id, unique to this process and start.
	 * @return {@code <pid>-<tag>}
	 */
	public static String newInstanceId() {
		return ProcessHandle.current().pid() + "-" + randomTag();
	}

	private static String randomTag() {
		return UUID.randomUUID().toString().substring(0, TAG_LENGTH);
	}

	/**
	 * The nonce of one run of a claim loop of an instance.
	 * @param instanceId the instance's id, as {@link #newInstanceId()} made it (another
	 * id gets a random tag: its leases name no holder)
	 * @param loop the loop's number, unique within the instance
	 * @return the nonce
	 */
	public static String loopNonce(String instanceId, long loop) {
		String tag = tagOfInstance(instanceId);
		return ((tag != null) ? tag : randomTag()) + Long.toString(loop, 36);
	}

	/**
	 * The tag of the instance that made a lease.
	 * @param token the lease token
	 * @return the tag, or {@code null} for a token no claim loop made
	 */
	public static @Nullable String tagOfToken(@Nullable String token) {
		if (token == null || token.length() <= TAG_LENGTH) {
			return null;
		}
		String tag = token.substring(0, TAG_LENGTH);
		return TAG.matcher(tag).matches() ? tag : null;
	}

	/**
	 * The tag of an instance id.
	 * @param instanceId the id
	 * @return the tag, or {@code null} when the id is not one {@link #newInstanceId()}
	 * made
	 */
	public static @Nullable String tagOfInstance(String instanceId) {
		String tag = instanceId.substring(instanceId.lastIndexOf('-') + 1);
		return TAG.matcher(tag).matches() ? tag : null;
	}

}
