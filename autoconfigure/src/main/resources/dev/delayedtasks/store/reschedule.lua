-- reschedule: move a scheduled or ready task to a new due time, keeping its id.
-- KEYS (fixed 6, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 tick   LIST    <= 1 token: the earliest due time changed
--   5 stats  HASH    counters
--   6 t:<id> HASH    task
--   derived (same hash tag; base = KEYS[1] without 'sched'): dead ZSET, lease ZSET, e:<id> STRING (corrupt data only)
-- ARGV: 1 id, 2 mode ('D' delay ms | 'A' absolute epoch ms), 3 time, 4 fanoutBatch
-- Reply: {now, code, due ms or -1}; code: 'O' rescheduled (due) | 'N' not found or cancelled |
--   'W' wrong state (active or dead) | 'K' corrupt (dead-lettered)
-- keys: fixed=6 per-item=0
redis.replicate_commands()
-- redis.pcall for reads that may meet bad data, except that a key whose Cluster slot is moving to another
-- master ("non local key") is not bad data: raise, so the caller retries once the slot has moved.
local function pread(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err and string.find(r.err, 'non local key', 1, true) then error(r.err) end
  return r
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local sched, ready, wake, tick, stats, tk = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local base = string.sub(sched, 1, -#'sched' - 1)

-- Integer or nil: fields and ARGV arrive as strings; fractions, inf and nan must not reach a write.
local function int(x)
  local num = tonumber(x)
  if num and num == math.floor(num) and math.abs(num) < 2 ^ 53 then return num end
end

local id, mode, time, fanoutBatch = ARGV[1], ARGV[2], int(ARGV[3]), int(ARGV[4])
if not (#KEYS == 6 and id and (mode == 'D' or mode == 'A') and time and fanoutBatch and fanoutBatch >= 1) then
  return redis.error_reply('ERR reschedule: bad KEYS/ARGV')
end
local due = mode == 'D' and now + time or time

local r = pread('HMGET', tk, 's')
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
  redis.call('SET', base .. 'e:' .. id, 'corrupt\n\n' .. (r.err and 'task key is not a hash'
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
    redis.call('ZREM', sched, id)
    redis.call('HSET', tk, 's', 'R', 'd', due)
    redis.call('RPUSH', ready, id)
    local want = math.min(math.ceil(redis.call('LLEN', ready) / fanoutBatch), 64) - redis.call('LLEN', wake)
    for _ = 1, want do redis.call('RPUSH', wake, 1) end
  else
    redis.call('HSET', tk, 'd', due) -- already ready: it stays where it is in the queue
  end
elseif s == 'S' then
  tickIfEarliest()
  redis.call('ZADD', sched, 'XX', due, id)
  redis.call('HSET', tk, 'd', due)
else
  -- The ready hint stays behind (removing it is O(N)); claim skips it and the ghost count keeps LLEN honest.
  tickIfEarliest()
  redis.call('HSET', tk, 's', 'S', 'd', due)
  redis.call('ZADD', sched, due, id)
  redis.call('HINCRBY', stats, 'ghost', 1)
end
return {now, 'O', due}
