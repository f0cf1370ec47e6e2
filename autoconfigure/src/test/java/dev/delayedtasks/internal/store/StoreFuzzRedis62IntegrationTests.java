package dev.delayedtasks.internal.store;

import dev.delayedtasks.test.RedisKind;
import dev.delayedtasks.test.WithRedis;

/**
 * The store fuzz test on Redis 6.2, the oldest server the scripts support.
 */
@WithRedis(kind = RedisKind.BUNDLED_6_2)
class StoreFuzzRedis62IntegrationTests extends AbstractStoreFuzzIntegrationTests {

}
