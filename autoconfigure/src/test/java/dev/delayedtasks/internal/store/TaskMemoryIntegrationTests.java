package dev.delayedtasks.internal.store;

import dev.delayedtasks.test.WithRedis;

/**
 * The task memory measurement on a private server of the default kind (Redis 7 here).
 */
@WithRedis(privateServer = true)
class TaskMemoryIntegrationTests extends AbstractTaskMemoryIntegrationTests {

}
