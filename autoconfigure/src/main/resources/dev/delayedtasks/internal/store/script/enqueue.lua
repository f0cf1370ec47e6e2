-- enqueue: create a batch of tasks in one queue partition, idempotent on id, with an optional uniqueness slot.
-- KEYS (fixed 6, per item 3):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints of priority 0
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 tick   LIST    <= 1 token: the earliest due time changed
--   5 stats  HASH    counters
--   6 meta   HASH    v = layout version
--   per item: t:<id> HASH task, p:<id> STRING payload envelope, u:<digest> STRING uniqueness slot (base..'u:' if none)
--   derived from ARGV base (same hash tag), not declared: dead ZSET and e:<id> STRING (only corrupt data touches
--   them), lease ZSET (corrupt data, and the hand-off of ARGV 5); t:<holder> HASH (the holder's id is read from the
--   uniqueness slot); o:<id> HASH, the outcome record of an earlier task with the id, deleted when the id is created
--   again (a new incarnation); levels ZSET and ready:<p> LISTs, the ready hints of the other priorities
--   (includes/priorities.lua)
-- ARGV: 1 base, 2 count, 3 layout version, 4 fanoutBatch,
--   5 hand-off ('0' none | '<nonce> <n> <leaseMs> <tick 0/1>': an idle dispatcher of the calling process takes up to
--   n of the created tasks that are ready at once, leased here as a claim would lease them (token '<nonce>:<fence>',
--   deadline now + leaseMs), while the ready lists are empty and the queue is neither paused nor under flow control
--   (meta field fl, includes/flow.lua), so no task overtakes one that
--   waits; tick 1 pushes a tick token when the first lease of the partition is one the timer owner must hear of),
--   then per item 11: id, mode ('D' delay ms | 'A' absolute epoch ms), time, maxAttempts, uniqueTtlMs (0 = none),
--   expiry ('0' none | 'D'<ms> after now | 'A'<epoch ms>: the task is never run from then on, field xa),
--   outcome ('0' none | '<keep ms>' | '<keep ms> <channel>': keep how the task ended for that long, field or, and
--   tell a tracking producer on that channel, field tn; see includes/outcome.lua; on an existing live task the
--   longer keep wins and the channel joins its trackers, so a re-send never detaches a waiter or shortens a keep),
--   envelope, rate key ('' none: field rk, the key of the queue's key-rate-limit, includes/flow.lua), cost ('' or
--   '1': 1; else field w, the starts the task's lease counts against the rate limits), priority ('' or '0': 0; else
--   field pr, -10 to 10, higher claimed first among ready tasks)
-- Reply: {now, 'LAYOUT', storedVersion} when the stored layout differs (nothing is written); else
--   {now, fresh (0/1), then per item: code ('C' created | 'L' created and leased by the hand-off | 'E' existing |
--    'U' duplicate | 'K' corrupt), id (the created id, or the existing/duplicate holder's id), due ms (or -1),
--    token ('L' only) or ''}
--   fresh = 1: meta had no layout version (a new partition, or one removed from the index by the remove script), so
--   the producer adds the queue to the index again, after this write
-- keys: fixed=6 per-item=3
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "reasons"
--- @include "int"
--- @include "trackers"

local sched, ready, wake, tick, stats, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

local base, items, layout, fanoutBatch = ARGV[1], int(ARGV[2]), ARGV[3], int(ARGV[4])
if not (base and items and items >= 0 and #KEYS == 6 + 3 * items and #ARGV == 5 + 11 * items
    and fanoutBatch and fanoutBatch >= 1) then
  return redis.error_reply('ERR enqueue: KEYS/ARGV do not match the item count')
end
local handoffNonce, handoffMax, handoffLeaseMs, handoffTick
if ARGV[5] ~= '0' then
  local nonce, n, ms, t = string.match(ARGV[5], '^(%S+) (%d+) (%d+) ([01])$')
  handoffNonce, handoffMax, handoffLeaseMs, handoffTick = nonce, int(n), int(ms), t == '1'
  if not (handoffNonce and handoffMax and handoffLeaseMs and handoffLeaseMs > 0) then
    return redis.error_reply('ERR enqueue: bad hand-off argument')
  end
end

--- @include "fanout"

-- The expiry instant in Redis time, 0 for none, nil when the argument is malformed.
local function expiry(arg)
  if arg == '0' then return 0 end
  local kind, ms = string.sub(arg, 1, 1), int(string.sub(arg, 2))
  if not ms or ms < 0 then return nil end
  if kind == 'D' then return now + ms end
  if kind == 'A' then return ms end
end

-- How long to keep the outcome (0 for not at all) and the tracker's channel ('' for none); nil when malformed.
local function outcome(arg)
  local keep, channel = string.match(arg, '^(%d+) ?(.*)$')
  return int(keep), channel
end

for i = 0, items - 1 do
  local a = 5 + 11 * i
  local mode = ARGV[a + 2]
  local p = ARGV[a + 11] == '' and 0 or int(ARGV[a + 11])
  if (mode ~= 'D' and mode ~= 'A') or not int(ARGV[a + 3]) or not int(ARGV[a + 4]) or not int(ARGV[a + 5])
      or not expiry(ARGV[a + 6]) or not outcome(ARGV[a + 7]) or not (ARGV[a + 10] == '' or int(ARGV[a + 10]))
      or not (p and p >= -10 and p <= 10) then
    return redis.error_reply('ERR enqueue: bad ARGV for item ' .. (i + 1))
  end
end

local stored = redis.call('HGET', meta, 'v')
if stored and stored ~= layout then return {now, 'LAYOUT', stored} end
-- Always written, and first: a full Redis refuses a script at its first write of a command that may grow memory,
-- and only there, so this call must refuse the whole batch before any DEL (which does not count) has run.
redis.call('HSETNX', meta, 'v', layout)
-- The earliest due time before this call, read once and only when a task is scheduled (false: none scheduled).
local prevHead
local function readHead()
  if prevHead == nil then
    local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
    prevHead = head[2] and tonumber(head[2]) or false
  end
end

local live = {S = true, R = true, A = true}
local reply, created, corrupted, anyReady, minDue = {now, stored and 0 or 1}, 0, 0, false, nil
local lease = base .. 'lease'
-- A task overtakes none: only while nothing waits in the ready lists, and never on a paused queue or one with flow
-- control (its leases are counted by claim and promote alone).
local handed = 0
local canHandOff = false
if handoffNonce and handoffMax > 0 and readyCount() == 0 then
  canHandOff = redis.call('HGET', meta, 'paused') ~= '1' and not flowLimits()
end
local leaseWasEmpty = canHandOff and redis.call('ZCARD', lease) == 0

for i = 0, items - 1 do
  local tk, pk, uk = KEYS[7 + 3 * i], KEYS[8 + 3 * i], KEYS[9 + 3 * i]
  local a = 5 + 11 * i
  local id, mode, time, maxAttempts, ttl, expiresAt, envelope, rateKey, cost =
    ARGV[a + 1], ARGV[a + 2], int(ARGV[a + 3]), int(ARGV[a + 4]), int(ARGV[a + 5]), expiry(ARGV[a + 6]), ARGV[a + 8],
    ARGV[a + 9], int(ARGV[a + 10]) or 1
  local priority = int(ARGV[a + 11]) or 0
  local keep, channel = outcome(ARGV[a + 7])
  local due = mode == 'D' and now + time or time
  local code, rid, rdue, token = 'C', id, due, nil

  -- Most ids are new: one TYPE call tells an absent key from a task or from data this script cannot read.
  local kind = redis.call('TYPE', tk).ok
  local isHash = kind == 'hash'
  local cur = isHash and redis.call('HMGET', tk, 's', 'd') or {}
  if (kind ~= 'none' and not isHash) or (isHash and not cur[1]) then
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
    -- A producer that tracks an existing task (a retry of its schedule, a restart) is told when it ends, and so
    -- is every producer that tracked it before: the longer keep wins, the channel joins the others.
    if keep > 0 and cur[1] ~= 'D' then
      local t = redis.call('HMGET', tk, 'or', 'tn')
      redis.call('HSET', tk, 'or', math.max(int(t[1]) or 0, keep), 'tn', withTracker(t[2], channel))
    end
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
      if due <= now then touchReady(priority) end -- before its writes: a moved slot raises first
      -- A new incarnation: an earlier task's outcome record must never be read as this one's.
      redis.call('DEL', base .. 'o:' .. id)
      -- A cancelled tombstone counts as absent; the hints it left in the list of the new task's priority are skipped.
      local leftBehind = 0
      if cur[1] then
        local old = redis.call('HMGET', tk, 'gh', 'pr')
        if priorityOf(old[2]) == priority then leftBehind = int(old[1]) or 0 end
        redis.call('DEL', tk)
      end
      local state = due <= now and 'R' or 'S'
      local fields = {'s', state, 'a', 0, 'v', 0, 'm', maxAttempts, 'f', 0, 'd', due, 'c', now}
      if state == 'R' and canHandOff and handed < handoffMax and (expiresAt == 0 or expiresAt > now) then
        -- Leased as claim leases: the fence from the partition-wide counter, one delivery.
        local f = redis.call('HINCRBY', stats, 'fence', 1)
        token = handoffNonce .. ':' .. f
        state, code = 'A', 'L'
        fields = {'s', 'A', 'a', 0, 'v', 1, 'm', maxAttempts, 'f', f, 'k', token, 'd', due, 'c', now}
        handed = handed + 1
      end
      if unique then fields[#fields + 1] = 'u'; fields[#fields + 1] = digest end
      if expiresAt > 0 then fields[#fields + 1] = 'xa'; fields[#fields + 1] = expiresAt end
      if rateKey ~= '' then fields[#fields + 1] = 'rk'; fields[#fields + 1] = rateKey end
      if cost > 1 then fields[#fields + 1] = 'w'; fields[#fields + 1] = cost end
      if priority ~= 0 then fields[#fields + 1] = 'pr'; fields[#fields + 1] = priority end
      if leftBehind > 0 then fields[#fields + 1] = 'gh'; fields[#fields + 1] = leftBehind end
      if keep > 0 then
        fields[#fields + 1] = 'or'; fields[#fields + 1] = keep
        if channel ~= '' then fields[#fields + 1] = 'tn'; fields[#fields + 1] = channel end
      end
      redis.call('HSET', tk, unpack(fields))
      redis.call('SET', pk, envelope)
      if state == 'A' then
        redis.call('ZADD', lease, now + handoffLeaseMs, id)
      elseif state == 'R' then
        pushReady(id, priority)
        anyReady = true
      else
        readHead()
        redis.call('ZADD', sched, due, id)
        if not minDue or due < minDue then minDue = due end
      end
      created = created + 1
    end
  end
  reply[#reply + 1] = code
  reply[#reply + 1] = rid
  reply[#reply + 1] = rdue
  reply[#reply + 1] = token or ''
end

if created > 0 then redis.call('HINCRBY', stats, 'enq', created) end
if corrupted > 0 then redis.call('HINCRBY', stats, 'corrupt', corrupted) end
if handed > 0 then
  redis.call('HINCRBY', stats, 'claimed', handed)
  if leaseWasEmpty and handoffTick and redis.call('LLEN', tick) == 0 then redis.call('LPUSH', tick, 1) end
end
if minDue and (not prevHead or minDue < prevHead) and redis.call('LLEN', tick) == 0 then
  redis.call('LPUSH', tick, 1)
end
if anyReady then fanout() end
return reply
