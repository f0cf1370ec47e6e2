-- stats: read-only snapshot of one queue partition: sizes, next deadlines, timer owner and counters.
-- KEYS (fixed 7, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints of priority 0
--   3 lease  ZSET    id -> lease deadline ms
--   4 dead   ZSET    id -> dead-letter time ms
--   5 stats  HASH    counters
--   6 meta   HASH    v = layout version, paused = '1' when paused
--   7 timer  STRING  timer owner id (PX)
--   derived from ARGV base (same hash tag; the ids are found inside the script): t:<id> HASH of the first ready hints;
--   starts ZSET (the rate limit's window, includes/flow.lua); levels ZSET and ready:<p> LISTs, the ready hints of the
--   other priorities (includes/priorities.lua)
-- ARGV: 1 base, 2 hintScan (max ready hints inspected per priority for the oldest ready due time)
-- Reply: {now, ZCARD sched, ready hints of every priority, ZCARD lease, ZCARD dead, nextDue or -1,
--   oldestReadyDue or -1, PTTL timer, timer owner or '', paused (0/1), layout version or '', limits (meta field fl) or '', starts (leases within the
--   rate limit's window, 0 without one), held until (Redis ms of a hold in force, else 0), then the stats hash
--   flattened: name, value, ...}
--   (stored field names, such as enq or canceled; Java's QueueCounter maps them to the names users see)
-- keys: fixed=7 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"

local sched, ready, lease, dead, stats, meta, timer = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local base, hintScan = ARGV[1], tonumber(ARGV[2])
if not (#KEYS == 7 and base and hintScan) then return redis.error_reply('ERR stats: bad KEYS/ARGV') end

--- @include "flow"

local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
-- Hints can be stale (cancel, reschedule), so the age comes from the first hint whose task is really ready.
-- Each priority waits in its own order, so the oldest is the earliest of their heads.
local oldestReady = -1
if hintScan >= 1 then
  for _, level in ipairs(readyLists()) do
    for _, id in ipairs(redis.call('LRANGE', level[1], 0, math.floor(hintScan) - 1)) do
      local r = pread('HMGET', base .. 't:' .. id, 's', 'd')
      local d = not r.err and r[1] == 'R' and tonumber(r[2])
      if d then
        if oldestReady < 0 or d < oldestReady then oldestReady = d end
        break
      end
    end
  end
end

local reply = {now, redis.call('ZCARD', sched), readyCount(), redis.call('ZCARD', lease),
  redis.call('ZCARD', dead), head[2] and tonumber(head[2]) or -1, oldestReady, redis.call('PTTL', timer),
  redis.call('GET', timer) or '', redis.call('HGET', meta, 'paused') == '1' and 1 or 0,
  redis.call('HGET', meta, 'v') or ''}
local limits = flowLimits()
reply[12] = redis.call('HGET', meta, 'fl') or ''
reply[13] = (limits and limits.count > 0)
  and redis.call('ZCOUNT', base .. 'starts', '(' .. (now - limits.window), '+inf') or 0
reply[14] = limits and limits.hold or 0
for _, x in ipairs(redis.call('HGETALL', stats)) do reply[#reply + 1] = x end
return reply
