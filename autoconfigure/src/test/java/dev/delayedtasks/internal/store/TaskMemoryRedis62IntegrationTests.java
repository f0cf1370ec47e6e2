package dev.delayedtasks.internal.store;

import dev.delayedtasks.test.RedisKind;
import dev.delayedtasks.test.WithRedis;

/**
 * The task memory measurement on a private Redis 6.2 server (ziplist instead of
 * listpack).
 */
@WithRedis(kind = RedisKind.BUNDLED_6_2, privateServer = true)
class TaskMemoryRedis62IntegrationTests extends AbstractTaskMemoryIntegrationTests {

}
