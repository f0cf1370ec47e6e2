-- reasons: the failure reasons scripts write as the first line of an error record e:<id>, spelled once. They are
-- values of Java's dev.delayedtasks.FailureReason (a test keeps the two equal); the worker's own reasons
-- (non-retryable, unreadable-payload) reach fail.lua in ARGV.
local FAILED, RETRIES_EXHAUSTED, MAX_DELIVERIES, CORRUPT, EXPIRED = 'failed', 'retries-exhausted', 'max-deliveries', 'corrupt', 'expired'
