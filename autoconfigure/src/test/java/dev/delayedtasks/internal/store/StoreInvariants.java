package dev.delayedtasks.internal.store;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Checks the invariants of one queue partition (redis-algorithms §6.3) and lists every
 * violation: I1 each task is in exactly the index its state names; I2 a task is active
 * exactly when it is in the lease set and holds a token; every indexed id has its task
 * (dead corrupt entries excepted) and every live task its payload; I4 a unique slot
 * points only to a live task. A ready task waits in the ready list of its priority (field
 * {@code pr}), which claims reach: {@code ready}, or {@code ready:
 *
<p>
 * } listed in {@code levels} with {@code meta} field {@code pr} set.
 */
final class StoreInvariants {

	private StoreInvariants() {
	}

	private static boolean readyInItsPriority(Map<String, Set<String>> readyByPriority, Set<String> levels,
			boolean levelsRead, Object priority, String id) {
		String p = (priority != null) ? priority.toString() : "0";
		Set<String> list = readyByPriority.get(p);
		if (list == null || !list.contains(id)) {
			return false;
		}
		return "0".equals(p) || (levelsRead && levels.contains(p));
	}

	static List<String> violations(StringRedisTemplate redis, PartitionKeys keys) {
		List<String> violations = new ArrayList<>();
		Set<String> sched = members(redis.opsForZSet().range(keys.sched(), 0, -1));
		Set<String> lease = members(redis.opsForZSet().range(keys.lease(), 0, -1));
		Set<String> dead = members(redis.opsForZSet().range(keys.dead(), 0, -1));
		Set<String> levels = members(redis.opsForZSet().range(keys.base() + "levels", 0, -1));
		boolean levelsRead = "1".equals(redis.opsForHash().get(keys.meta(), "pr"));
		Map<String, Set<String>> readyByPriority = new HashMap<>();
		for (int p = -10; p <= 10; p++) {
			String list = (p == 0) ? keys.ready() : keys.base() + "ready:" + p;
			readyByPriority.put(Integer.toString(p), new HashSet<>(orEmpty(redis.opsForList().range(list, 0, -1))));
		}
		Set<String> ready = new HashSet<>();
		readyByPriority.values().forEach(ready::addAll);
		Set<String> tasks = new HashSet<>();
		for (String key : scan(redis, keys.base() + "t:*")) {
			String id = key.substring((keys.base() + "t:").length());
			tasks.add(id);
			if (!"hash".equals(redis.type(key).code())) {
				if (!dead.contains(id)) {
					violations.add(id + ": t: key of the wrong type is not dead-lettered");
				}
				continue;
			}
			Map<Object, Object> fields = redis.opsForHash().entries(key);
			String state = (String) fields.get("s");
			boolean hasToken = fields.containsKey("k");
			String where = id + " (s=" + state + ", sched=" + sched.contains(id) + ", ready=" + ready.contains(id)
					+ ", lease=" + lease.contains(id) + ", dead=" + dead.contains(id) + ", k=" + hasToken + ")";
			if (state == null) {
				if (!dead.contains(id)) {
					violations.add(where + ": task without state is not dead-lettered");
				}
				continue;
			}
			boolean ok = switch (state) {
				case "S" -> sched.contains(id) && !lease.contains(id) && !dead.contains(id);
				case "R" -> readyInItsPriority(readyByPriority, levels, levelsRead, fields.get("pr"), id)
						&& !sched.contains(id) && !lease.contains(id) && !dead.contains(id);
				case "A" -> lease.contains(id) && !sched.contains(id) && !dead.contains(id);
				case "D" -> dead.contains(id) && !sched.contains(id) && !lease.contains(id);
				case "X" -> !sched.contains(id) && !lease.contains(id) && !dead.contains(id);
				default -> false;
			};
			if (!ok) {
				violations.add(where + ": not in exactly the index of its state (I1)");
			}
			if (("A".equals(state)) != hasToken) {
				violations.add(where + ": token present exactly when active is violated (I2)");
			}
			if (List.of("S", "R", "A").contains(state) && !Boolean.TRUE.equals(redis.hasKey(keys.payload(id)))) {
				violations.add(where + ": live task without payload");
			}
		}
		for (String id : sched) {
			if (!tasks.contains(id)) {
				violations.add(id + ": in sched without a task");
			}
		}
		for (String id : lease) {
			if (!tasks.contains(id)) {
				violations.add(id + ": in lease without a task");
			}
		}
		for (String id : dead) {
			if (!tasks.contains(id)) {
				String error = redis.opsForValue().get(keys.error(id));
				if (error == null || !error.startsWith("corrupt")) {
					violations.add(id + ": in dead without a task and not marked corrupt");
				}
			}
		}
		for (String key : scan(redis, keys.base() + "u:*")) {
			String holder = redis.opsForValue().get(key);
			Object state = (holder != null) ? redis.opsForHash().get(keys.task(holder), "s") : null;
			if (state == null || !List.of("S", "R", "A").contains(state.toString())) {
				violations.add(key + " -> " + holder + " (s=" + state + "): unique slot held by no live task (I4)");
			}
		}
		return violations;
	}

	private static Set<String> members(Set<String> values) {
		return (values != null) ? values : Set.of();
	}

	private static List<String> orEmpty(List<String> values) {
		return (values != null) ? values : List.of();
	}

	private static List<String> scan(StringRedisTemplate redis, String pattern) {
		List<String> keys = new ArrayList<>();
		try (Cursor<String> cursor = redis.scan(ScanOptions.scanOptions().match(pattern).count(1000).build())) {
			cursor.forEachRemaining(keys::add);
		}
		return keys;
	}

}
