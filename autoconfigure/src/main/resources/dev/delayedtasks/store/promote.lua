-- promote: the timer owner's tick (promote due tasks, reap expired leases, fan out); also "become owner" and "resign".
-- KEYS (fixed 9, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints
--   3 lease  ZSET    id -> lease deadline ms
--   4 dead   ZSET    id -> dead-letter time ms
--   5 wake   LIST    wake tokens for idle dispatchers
--   6 tick   LIST    <= 1 token: the earliest deadline changed (written here only to hand a token popped by a
--                    caller that does not own the timer back to the owner)
--   7 timer  STRING  id of the instance owning this partition's timer (PX)
--   8 stats  HASH    counters
--   9 handover LIST  <= 1 token: the owner resigned; contenders block on it to take over at once
--   derived from ARGV base (same hash tag): t:<id> HASH, p:<id> STRING, e:<id> STRING, u:<digest> STRING, meta HASH (paused flag)
-- ARGV: 1 base, 2 ownerId, 3 timerTtlMs (0 = resign), 4 promoteLimit, 5 reapLimit, 6 graceMs, 7 fanoutBatch,
--   8 maxDeliveries, 9 tickConsumed (1: the caller popped a tick token for this call)
-- Reply: {now, owner (1/0), ttl ms, nextDue or -1, earliestLease or -1, more (0/1)}
--   resign: {now, 0, -2, -1, -1, 0}; another owner holds the timer: {now, 0, PTTL timer, -1, -1, 0}
-- keys: fixed=9 per-item=0
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

local sched, ready, lease, dead, wake, tick, timer, stats, handover =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local base, ownerId = ARGV[1], ARGV[2]

-- Integer or nil: fields and ARGV arrive as strings; fractions, inf and nan must not reach a write.
local function int(x)
  local num = tonumber(x)
  if num and num == math.floor(num) and math.abs(num) < 2 ^ 53 then return num end
end

local ttl, promoteLimit, reapLimit, graceMs, fanoutBatch, maxDeliveries, tickConsumed =
  int(ARGV[3]), int(ARGV[4]), int(ARGV[5]), int(ARGV[6]), int(ARGV[7]), int(ARGV[8]), ARGV[9] == '1'
if not (#KEYS == 9 and ownerId and ttl and ttl >= 0 and promoteLimit and promoteLimit >= 0 and reapLimit
    and reapLimit >= 0 and graceMs and graceMs >= 0 and fanoutBatch and fanoutBatch >= 1 and maxDeliveries) then
  return redis.error_reply('ERR promote: bad KEYS/ARGV')
end

local own = redis.call('GET', timer)
if ttl == 0 then
  if own == ownerId then
    redis.call('DEL', timer)
    if redis.call('LLEN', handover) == 0 then redis.call('LPUSH', handover, 1) end
  end
  return {now, 0, -2, -1, -1, 0}
end
if own and own ~= ownerId then
  -- A caller whose owner flag was stale popped the owner's tick: give it back, or the owner re-arms late.
  if tickConsumed and redis.call('LLEN', tick) == 0 then redis.call('LPUSH', tick, 1) end
  return {now, 0, redis.call('PTTL', timer), -1, -1, 0}
end
redis.call('SET', timer, ownerId, 'PX', ttl)

-- >>> promote and reap blocks: keep byte-identical in claim.lua and promote.lua (Lua scripts cannot include files)
local counts = {}
local function bump(field, by) counts[field] = (counts[field] or 0) + (by or 1) end
local function flushCounts()
  for field, by in pairs(counts) do
    if by ~= 0 then redis.call('HINCRBY', stats, field, by) end
  end
end

-- Reads a task hash without ever raising. Status: 'ok' | 'missing' | 'notahash' | 'nostate'.
local function readTask(tk, ...)
  local r = pread('HMGET', tk, 's', ...)
  if type(r) ~= 'table' or r.err then return 'notahash', {} end
  if not r[1] then return redis.call('EXISTS', tk) == 0 and 'missing' or 'nostate', r end
  return 'ok', r
end

local problems = {notahash = 'task key is not a hash', nostate = 'task hash has no state'}

-- Redis does not roll back a script that fails half-way, so malformed data is parked in dead instead of raising.
local function corrupt(id, status, what, index)
  local tk = base .. 't:' .. id
  -- e: is not a declared key: touching it first means a moved slot raises before this task changed.
  redis.call('SET', base .. 'e:' .. id, 'corrupt\n\n' .. (what or problems[status]))
  if index then redis.call('ZREM', index, id) end
  if status ~= 'notahash' then
    redis.call('HSET', tk, 's', 'D')
    redis.call('HDEL', tk, 'k')
  end
  redis.call('ZADD', dead, now, id)
  bump('corrupt')
end

local function releaseUnique(id, u)
  if u and u ~= '' then
    local uk = base .. 'u:' .. u
    if pread('GET', uk) == id then redis.call('DEL', uk) end
  end
end

local function deleteTask(id)
  redis.call('DEL', base .. 't:' .. id, base .. 'p:' .. id, base .. 'e:' .. id)
end

local function headScore(key)
  local h = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return h[2] and tonumber(h[2]) or -1
end

-- One token per fanoutBatch ready tasks (at most 64) wakes just enough idle dispatchers.
local function fanout()
  local backlog = redis.call('LLEN', ready)
  if backlog == 0 then return end
  local want = math.min(math.ceil(backlog / fanoutBatch), 64) - redis.call('LLEN', wake)
  for _ = 1, want do redis.call('RPUSH', wake, 1) end
end

-- Moves due scheduled tasks to ready; returns true when the limit was hit (more may be due).
local function promoteDue()
  if promoteLimit == 0 then return false end
  local ids = redis.call('ZRANGEBYSCORE', sched, '-inf', now, 'LIMIT', 0, promoteLimit)
  for _, id in ipairs(ids) do
    local status, r = readTask(base .. 't:' .. id)
    if status == 'ok' and r[1] == 'S' then
      redis.call('ZREM', sched, id)
      redis.call('HSET', base .. 't:' .. id, 's', 'R')
      redis.call('RPUSH', ready, id)
      bump('promoted')
    elseif status == 'ok' or status == 'missing' then
      redis.call('ZREM', sched, id) -- stale index entry: the hash is gone or says another state
      bump('orphan')
    else
      corrupt(id, status, nil, sched)
    end
  end
  return #ids >= promoteLimit
end

-- Recovers tasks whose lease expired more than graceMs ago; returns true when the limit was hit.
local function reapExpired()
  if reapLimit == 0 then return false end
  local ids = redis.call('ZRANGEBYSCORE', lease, '-inf', now - graceMs, 'LIMIT', 0, reapLimit)
  for _, id in ipairs(ids) do
    local tk = base .. 't:' .. id
    local status, r = readTask(tk, 'v', 'cr', 'u', 'x')
    -- x counts the leases that expired since the task's last recorded failure (absent = 0): ordinary failures
    -- are bounded by max attempts, so only deliveries that ended without any outcome count towards maxDeliveries.
    local v, x = int(r[2]), 0
    if r[5] then x = int(r[5]) end
    if status == 'missing' or (status == 'ok' and r[1] ~= 'A') then
      redis.call('ZREM', lease, id)
      bump('orphan')
    elseif status ~= 'ok' then
      corrupt(id, status, nil, lease)
    elseif r[3] == '1' then
      -- Cancelled while it ran: the cancel wins over a redelivery. Undeclared keys first, the index last.
      releaseUnique(id, r[4])
      deleteTask(id)
      redis.call('ZREM', lease, id)
      bump('canceled')
    elseif not v then
      corrupt(id, status, 'field v is not a number', lease)
    elseif not x then
      corrupt(id, status, 'field x is not a number', lease)
    elseif x + 1 >= maxDeliveries then
      -- Poison-pill guard: a task that keeps killing its worker stops being redelivered.
      local what = 'lease expired after ' .. (x + 1) .. ' deliveries'
      if x + 1 ~= v then what = what .. ' in a row (' .. v .. ' in all)' end
      redis.call('SET', base .. 'e:' .. id, 'max-deliveries\n\n' .. what)
      releaseUnique(id, r[4])
      redis.call('ZREM', lease, id)
      redis.call('HDEL', tk, 'k')
      redis.call('HSET', tk, 's', 'D', 'x', x + 1)
      redis.call('ZADD', dead, now, id)
      bump('dead')
    else
      redis.call('ZREM', lease, id)
      redis.call('HDEL', tk, 'k')
      redis.call('HSET', tk, 's', 'R', 'x', x + 1)
      redis.call('RPUSH', ready, id)
      bump('reaped')
    end
  end
  return #ids >= reapLimit
end
-- <<< promote and reap blocks

local more = promoteDue()
more = reapExpired() or more
-- A paused queue is not claimed: waking its dispatchers would only make them spin. Resume wakes them.
if redis.call('HGET', base .. 'meta', 'paused') ~= '1' then fanout() end
flushCounts()
return {now, 1, ttl, headScore(sched), headScore(lease), more and 1 or 0}
