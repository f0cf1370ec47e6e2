-- enqueue: create a batch of tasks in one queue partition, idempotent on id, with an optional uniqueness slot.
-- KEYS (fixed 6, per item 3):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 tick   LIST    <= 1 token: the earliest due time changed
--   5 stats  HASH    counters
--   6 meta   HASH    v = layout version
--   per item: t:<id> HASH task, p:<id> STRING payload envelope, u:<digest> STRING uniqueness slot (base..'u:' if none)
--   derived from ARGV base (same hash tag), not declared because only corrupt data touches them: dead ZSET,
--   lease ZSET, e:<id> STRING; and t:<holder> HASH (the holder's id is read from the uniqueness slot)
-- ARGV: 1 base, 2 count, 3 layout version, 4 fanoutBatch,
--   then per item 6: id, mode ('D' delay ms | 'A' absolute epoch ms), time, maxAttempts, uniqueTtlMs (0 = none),
--   envelope
-- Reply: {now, 'LAYOUT', storedVersion} when the stored layout differs (nothing is written); else
--   {now, then per item: code ('C' created | 'E' existing | 'U' duplicate | 'K' corrupt),
--    id (the created id, or the existing/duplicate holder's id), due ms (or -1)}
-- keys: fixed=6 per-item=3
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "reasons"
--- @include "int"

local sched, ready, wake, tick, stats, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

local base, items, layout, fanoutBatch = ARGV[1], int(ARGV[2]), ARGV[3], int(ARGV[4])
if not (base and items and items >= 0 and #KEYS == 6 + 3 * items and #ARGV == 4 + 6 * items
    and fanoutBatch and fanoutBatch >= 1) then
  return redis.error_reply('ERR enqueue: KEYS/ARGV do not match the item count')
end

--- @include "fanout"

for i = 0, items - 1 do
  local a = 4 + 6 * i
  local mode = ARGV[a + 2]
  if (mode ~= 'D' and mode ~= 'A') or not int(ARGV[a + 3]) or not int(ARGV[a + 4]) or not int(ARGV[a + 5]) then
    return redis.error_reply('ERR enqueue: bad ARGV for item ' .. (i + 1))
  end
end

local stored = redis.call('HGET', meta, 'v')
if stored and stored ~= layout then return {now, 'LAYOUT', stored} end
redis.call('HSETNX', meta, 'v', layout)
local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
local prevHead = head[2] and tonumber(head[2])

local live = {S = true, R = true, A = true}
local reply, created, corrupted, anyReady, minDue = {now}, 0, 0, false, nil

for i = 0, items - 1 do
  local tk, pk, uk = KEYS[7 + 3 * i], KEYS[8 + 3 * i], KEYS[9 + 3 * i]
  local a = 4 + 6 * i
  local id, mode, time, maxAttempts, ttl, envelope =
    ARGV[a + 1], ARGV[a + 2], int(ARGV[a + 3]), int(ARGV[a + 4]), int(ARGV[a + 5]), ARGV[a + 6]
  local due = mode == 'D' and now + time or time
  local code, rid, rdue = 'C', id, due

  local cur = pread('HMGET', tk, 's', 'd')
  local isHash = not cur.err
  if not isHash or (not cur[1] and redis.call('EXISTS', tk) == 1) then
    -- Unreadable data under this id: park it in dead rather than overwrite something we cannot interpret.
    -- Its state is unknown, so take it out of every index a dead task must not be in (I1).
    if isHash then redis.call('HSET', tk, 's', 'D'); redis.call('HDEL', tk, 'k') end
    redis.call('ZREM', sched, id)
    redis.call('ZREM', base .. 'lease', id)
    redis.call('ZADD', base .. 'dead', now, id)
    redis.call('SET', base .. 'e:' .. id,
      CORRUPT .. '\n\n' .. (isHash and 'task hash has no state' or 'task key is not a hash'))
    corrupted = corrupted + 1
    code, rdue = 'K', -1
  elseif cur[1] and cur[1] ~= 'X' then
    code, rdue = 'E', int(cur[2]) or -1
  else
    local prefix = base .. 'u:'
    local digest = string.sub(uk, 1, #prefix) == prefix and string.sub(uk, #prefix + 1) or ''
    local unique = ttl > 0 and digest ~= ''
    if unique and not redis.call('SET', uk, id, 'NX', 'PX', ttl) then
      local ex = pread('GET', uk)
      local holder = type(ex) == 'string' and pread('HMGET', base .. 't:' .. ex, 's', 'd')
      if holder and not holder.err and live[holder[1]] then
        code, rid, rdue = 'U', ex, int(holder[2]) or -1
      else
        -- The holder is gone, dead or cancelled: a stale slot must not block new work until its TTL ends.
        redis.call('SET', uk, id, 'PX', ttl)
      end
    end
    if code == 'C' then
      if cur[1] then redis.call('DEL', tk) end -- a cancelled tombstone counts as absent
      local state = due <= now and 'R' or 'S'
      local fields = {'s', state, 'a', 0, 'v', 0, 'm', maxAttempts, 'f', 0, 'd', due, 'c', now}
      if unique then fields[#fields + 1] = 'u'; fields[#fields + 1] = digest end
      redis.call('HSET', tk, unpack(fields))
      redis.call('SET', pk, envelope)
      if state == 'R' then
        redis.call('RPUSH', ready, id)
        anyReady = true
      else
        redis.call('ZADD', sched, due, id)
        if not minDue or due < minDue then minDue = due end
      end
      created = created + 1
    end
  end
  reply[#reply + 1] = code
  reply[#reply + 1] = rid
  reply[#reply + 1] = rdue
end

if created > 0 then redis.call('HINCRBY', stats, 'enq', created) end
if corrupted > 0 then redis.call('HINCRBY', stats, 'corrupt', corrupted) end
if minDue and (not prevHead or minDue < prevHead) and redis.call('LLEN', tick) == 0 then
  redis.call('LPUSH', tick, 1)
end
if anyReady then fanout() end
return reply
