-- claim: the dispatcher's call: promote due tasks, reap expired leases, lease up to n ready tasks, fan out wake tokens.
-- KEYS (fixed 8, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints
--   3 lease  ZSET    id -> lease deadline ms
--   4 dead   ZSET    id -> dead-letter time ms
--   5 wake   LIST    wake tokens for idle dispatchers
--   6 tick   LIST    <= 1 token: the earliest deadline changed
--   7 stats  HASH    counters
--   8 meta   HASH    paused = '1' while the queue is paused
--   derived from ARGV base (same hash tag): t:<id> HASH, p:<id> STRING, e:<id> STRING, u:<digest> STRING
-- ARGV: 1 base, 2 n, 3 leaseMs, 4 nonce, 5 promoteLimit, 6 reapLimit, 7 graceMs, 8 fanoutBatch, 9 maxDeliveries,
--   10 scanLimit (max hints popped in all, invalid ones included),
--   11 byteBudget (stop adding items once the payload bytes reach it; at least one item is always returned)
-- Reply: {now, nextDue or -1, earliestLease or -1, more (0/1), paused (0/1), itemCount,
--   then per item 9 fields: id, token, envelope, a, v (after increment), m, d, c, u or ''}
-- keys: fixed=8 per-item=0
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

local sched, ready, lease, dead, wake, tick, stats, meta =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local base, nonce = ARGV[1], ARGV[4]

-- Integer or nil: fields and ARGV arrive as strings; fractions, inf and nan must not reach a write.
local function int(x)
  local num = tonumber(x)
  if num and num == math.floor(num) and math.abs(num) < 2 ^ 53 then return num end
end

local n, leaseMs, promoteLimit, reapLimit, graceMs, fanoutBatch, maxDeliveries, scanLimit, byteBudget =
  int(ARGV[2]), int(ARGV[3]), int(ARGV[5]), int(ARGV[6]), int(ARGV[7]), int(ARGV[8]), int(ARGV[9]),
  int(ARGV[10]), int(ARGV[11])
if not (#KEYS == 8 and n and n >= 0 and leaseMs and leaseMs > 0 and promoteLimit and promoteLimit >= 0
    and reapLimit and reapLimit >= 0 and graceMs and graceMs >= 0 and fanoutBatch and fanoutBatch >= 1
    and maxDeliveries and scanLimit and scanLimit >= 0 and byteBudget and nonce) then
  return redis.error_reply('ERR claim: bad KEYS/ARGV')
end

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
local paused = redis.call('HGET', meta, 'paused') == '1'

-- The rule of Names.checkTaskId (1-64 ASCII letters, digits, '.', '-', '_', ':'): Java cannot take an id that breaks
-- it, so leasing one would fail the whole claim, and the same hint would come back at the head for ever.
local function validId(id)
  return #id >= 1 and #id <= 64 and not string.find(id, '[^A-Za-z0-9%.%-_:]')
end

local reply = {now, 0, 0, 0, paused and 1 or 0, 0}
local claimed = 0
if not paused then
  local leaseWasEmpty = redis.call('ZCARD', lease) == 0
  local ghosts = int(redis.call('HGET', stats, 'ghost')) or 0
  local skipped, pops, bytes = 0, 0, 0
  while claimed < n and pops < scanLimit do
    if claimed > 0 and bytes >= byteBudget then
      more = more or redis.call('LLEN', ready) > 0
      break
    end
    -- Peek, read, then pop: a read that raises (a moved slot) must not lose the hint.
    local id = redis.call('LINDEX', ready, 0)
    if not id then break end
    local tk = base .. 't:' .. id
    local status, r = readTask(tk, 'a', 'v', 'm', 'f', 'd', 'c', 'u')
    local payload = (status == 'ok' and r[1] == 'R') and pread('GET', base .. 'p:' .. id) or nil
    -- corrupt() may still raise at its undeclared e: key, so the hint goes only after it.
    if status == 'missing' or (status == 'ok' and r[1] ~= 'R') then
      skipped = skipped + 1 -- a hint left behind by cancel, reschedule or an expired tombstone
    elseif status ~= 'ok' then
      corrupt(id, status)
    end
    local a, v, m, f, d, c = int(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7])
    local leasable = status == 'ok' and r[1] == 'R'
    if leasable and not validId(id) then
      corrupt(id, status, 'task id is not 1-64 letters, digits, ".", "-", "_", ":"')
      leasable = false
    elseif leasable and not (a and v and m and f and d and c) then
      corrupt(id, status, 'a numeric field (a, v, m, f, d, c) is missing or not a number')
      leasable = false
    elseif leasable and type(payload) ~= 'string' then
      corrupt(id, status, payload and 'payload key is not a string' or 'payload is missing')
      leasable = false
    end
    redis.call('LPOP', ready)
    pops = pops + 1
    if leasable then
      -- The fence comes from a partition-wide counter, not the task's own: a task re-created with the same id
      -- starts again at f = 0, and a per-task count would hand an old lease's token to the new task.
      f, v = redis.call('HINCRBY', stats, 'fence', 1), v + 1
      local token = nonce .. ':' .. f
      redis.call('HSET', tk, 's', 'A', 'k', token, 'f', f, 'v', v)
      redis.call('ZADD', lease, now + leaseMs, id)
      claimed = claimed + 1
      bytes = bytes + #payload
      for _, x in ipairs({id, token, payload, a, v, m, d, c, r[8] or ''}) do reply[#reply + 1] = x end
    end
  end
  if skipped > 0 and ghosts > 0 then bump('ghost', -math.min(skipped, ghosts)) end
  if claimed > 0 then
    bump('claimed', claimed)
    if leaseWasEmpty and redis.call('LLEN', tick) == 0 then redis.call('LPUSH', tick, 1) end
  end
  if pops > 0 and (claimed >= n or pops >= scanLimit) and redis.call('LLEN', ready) > 0 then more = true end
  fanout()
end
flushCounts()

reply[2], reply[3], reply[4], reply[6] = headScore(sched), headScore(lease), more and 1 or 0, claimed
return reply
