-- advanceTime (delayed-tasks-test only): move one queue partition's clock forward for a test.
-- KEYS (fixed 3, per item 0):
--   1 meta   HASH    o = the test clock offset in ms, which the "now" include adds to Redis TIME in every script
--   2 lease  ZSET    id -> lease deadline ms
--   3 tick   LIST    <= 1 token: the earliest deadline changed, for the timer owner
-- ARGV: 1 amount ms (> 0), 2 leaseLimit (most leases moved along)
-- Reply: {now (after the move), offset ms}
-- keys: fixed=3 per-item=0
redis.replicate_commands()
--- @include "int"

local meta, lease, tick = KEYS[1], KEYS[2], KEYS[3]
local amount, leaseLimit = int(ARGV[1]), int(ARGV[2])
if not (#KEYS == 3 and amount and amount > 0 and leaseLimit and leaseLimit >= 1) then
  return redis.error_reply('ERR advanceTime: bad KEYS/ARGV')
end

local offset = redis.call('HINCRBY', meta, 'o', amount)
-- Handlers that run now keep their leases: time that passes only in the test must not let the timer reap their
-- tasks and run them a second time. Bounded: a test has at most concurrency x instances leases.
local leases = redis.call('ZRANGE', lease, 0, leaseLimit - 1, 'WITHSCORES')
for i = 1, #leases, 2 do
  redis.call('ZADD', lease, 'XX', tonumber(leases[i + 1]) + amount, leases[i])
end
-- Wake the timer owner: it sleeps until the next due time it knew, which may now be past.
if redis.call('LLEN', tick) == 0 then redis.call('LPUSH', tick, 1) end

--- @include "now"
return {now, offset}
