package dev.delayedtasks.internal.store;

import dev.delayedtasks.test.WithRedis;

/**
 * The store fuzz test on the default test Redis (Redis 7 here, or whatever
 * {@code delayed-tasks.test.redis.kind} asks for).
 */
@WithRedis
class StoreFuzzIntegrationTests extends AbstractStoreFuzzIntegrationTests {

}
