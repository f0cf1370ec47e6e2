-- reschedule: move a scheduled or ready task to a new due time, keeping its id.
-- KEYS (fixed 6, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 tick   LIST    <= 1 token: the earliest due time changed
--   5 stats  HASH    counters
--   6 t:<id> HASH    task
--   derived from ARGV base (same hash tag), not declared because only corrupt data touches them: dead ZSET,
--   lease ZSET, e:<id> STRING
-- ARGV: 1 base, 2 id, 3 mode ('D' delay ms | 'A' absolute epoch ms), 4 time, 5 fanoutBatch
-- Reply: {now, code, due ms or -1}; code: 'O' rescheduled (due) | 'N' not found or cancelled |
--   'W' wrong state (active or dead) | 'K' corrupt (dead-lettered)
-- keys: fixed=6 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "reasons"
--- @include "int"

local sched, ready, wake, tick, stats, tk = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

local base, id, mode, time, fanoutBatch = ARGV[1], ARGV[2], ARGV[3], int(ARGV[4]), int(ARGV[5])
if not (#KEYS == 6 and base and id and (mode == 'D' or mode == 'A') and time and fanoutBatch
    and fanoutBatch >= 1) then
  return redis.error_reply('ERR reschedule: bad KEYS/ARGV')
end

--- @include "fanout"

local due = mode == 'D' and now + time or time

local r = pread('HMGET', tk, 's', 'pr')
local s = not r.err and r[1]
if not r.err and not s and redis.call('EXISTS', tk) == 0 then return {now, 'N', -1} end
if s == 'X' then return {now, 'N', -1} end
if s == 'A' or s == 'D' then return {now, 'W', -1} end
if s ~= 'S' and s ~= 'R' then
  -- Not a hash, no state, or an unknown state: park it in dead rather than guess. Its state is unknown,
  -- so take it out of every index a dead task must not be in (I1).
  redis.call('ZREM', sched, id)
  redis.call('ZREM', base .. 'lease', id)
  if not r.err then
    redis.call('HSET', tk, 's', 'D')
    redis.call('HDEL', tk, 'k')
  end
  redis.call('ZADD', base .. 'dead', now, id)
  redis.call('SET', base .. 'e:' .. id, CORRUPT .. '\n\n' .. (r.err and 'task key is not a hash'
    or s and ('unknown state ' .. s) or 'task hash has no state'))
  redis.call('HINCRBY', stats, 'corrupt', 1)
  return {now, 'K', -1}
end

local function tickIfEarliest()
  local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
  if (not head[2] or due < tonumber(head[2])) and redis.call('LLEN', tick) == 0 then
    redis.call('LPUSH', tick, 1)
  end
end

if due <= now then
  if s == 'S' then
    touchReady(priorityOf(r[2]))
    redis.call('ZREM', sched, id)
    redis.call('HSET', tk, 's', 'R', 'd', due)
    redis.call('HDEL', tk, 'kw') -- set aside for its rate key: moved, it joins its key's line anew
    pushReady(id, priorityOf(r[2]))
    fanout()
  else
    redis.call('HSET', tk, 'd', due) -- already ready: it stays where it is in the queue
  end
elseif s == 'S' then
  tickIfEarliest()
  redis.call('ZADD', sched, 'XX', due, id)
  redis.call('HSET', tk, 'd', due)
  redis.call('HDEL', tk, 'kw')
else
  -- The ready hint stays behind (removing it is O(N)); claim skips it and the ghost count keeps LLEN honest. gh counts
  -- the task's hints left behind in its list: claim skips that many before the one it gets when it is ready again.
  tickIfEarliest()
  redis.call('HSET', tk, 's', 'S', 'd', due)
  redis.call('HINCRBY', tk, 'gh', 1)
  redis.call('ZADD', sched, due, id)
  redis.call('HINCRBY', stats, 'ghost', 1)
end
return {now, 'O', due}
