-- idle (delayed-tasks-test only): what keeps a queue partition busy, read at one instant of its clock.
-- KEYS (fixed 4, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints
--   3 lease  ZSET    id -> lease deadline ms
--   4 meta   HASH    paused = '1' while the queue is paused
-- ARGV: none
-- Reply: {now, scheduled and due, ready hints, leased, paused (0/1), next due ms or -1}
-- keys: fixed=4 per-item=0
redis.replicate_commands()
--- @include "now"

local sched, ready, lease, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
return {now, redis.call('ZCOUNT', sched, '-inf', now), redis.call('LLEN', ready), redis.call('ZCARD', lease),
  redis.call('HGET', meta, 'paused') == '1' and 1 or 0, head[2] and tonumber(head[2]) or -1}
