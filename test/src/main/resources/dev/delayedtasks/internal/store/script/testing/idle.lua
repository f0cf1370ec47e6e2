-- idle (delayed-tasks-test only): what keeps a queue partition busy, read at one instant of its clock.
-- KEYS (fixed 4, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints of priority 0
--   derived from the ready key (same hash tag): ready:<p> LISTs, the ready hints of the other priorities
--   3 lease  ZSET    id -> lease deadline ms
--   4 meta   HASH    paused = '1' while the queue is paused
-- ARGV: none
-- Reply: {now, scheduled and due, ready hints of every priority, leased, paused (0/1), next due ms or -1}
-- keys: fixed=4 per-item=0
redis.replicate_commands()
--- @include "now"

local sched, ready, lease, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base = string.sub(ready, 1, #ready - #'ready')

--- @include "priorities"

-- Every priority's list, whatever levels says: a ready task of any priority keeps the queue busy.
local hints = 0
for p = MIN_PRIORITY, MAX_PRIORITY do hints = hints + redis.call('LLEN', readyKey(p)) end
local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
return {now, redis.call('ZCOUNT', sched, '-inf', now), hints, redis.call('ZCARD', lease),
  redis.call('HGET', meta, 'paused') == '1' and 1 or 0, head[2] and tonumber(head[2]) or -1}
