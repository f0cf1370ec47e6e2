-- promoteAndReap: the shared core of claim and promote: move due scheduled tasks to ready (promoteDue), recover
-- tasks whose lease expired more than graceMs ago (reapExpired), park malformed data in dead (corrupt), count in
-- batches (bump, then flushCounts once at the end) and read an index's earliest score (headScore).
-- Task keys t:<id>, p:<id>, e:<id>, u:<digest> are derived: the ids are found inside the script.
-- uses: base, now, sched, lease, dead, stats, promoteLimit, reapLimit, graceMs, maxDeliveries
--- @include "pread"
--- @include "int"
--- @include "releaseUnique"
--- @include "deleteTask"
--- @include "reasons"
--- @include "outcome"
--- @include "priorities"
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
  redis.call('SET', base .. 'e:' .. id, CORRUPT .. '\n\n' .. (what or problems[status]))
  if index then redis.call('ZREM', index, id) end
  if status ~= 'notahash' then
    redis.call('HSET', tk, 's', 'D')
    redis.call('HDEL', tk, 'k')
  end
  redis.call('ZADD', dead, now, id)
  bump('corrupt')
end

local function headScore(key)
  local h = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return h[2] and tonumber(h[2]) or -1
end

-- Moves due scheduled tasks to ready; returns true when the limit was hit (more may be due).
local function promoteDue()
  if promoteLimit == 0 then return false end
  local ids = redis.call('ZRANGEBYSCORE', sched, '-inf', now, 'LIMIT', 0, promoteLimit)
  for _, id in ipairs(ids) do
    local status, r = readTask(base .. 't:' .. id, 'pr')
    if status == 'ok' and r[1] == 'S' then
      touchReady(priorityOf(r[2]))
      redis.call('ZREM', sched, id)
      redis.call('HSET', base .. 't:' .. id, 's', 'R')
      pushReady(id, priorityOf(r[2]))
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
    local status, r = readTask(tk, 'v', 'cr', 'u', 'x', 'pr')
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
      recordOutcome(id, tk, 'C', 1, '', '', '', '')
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
      recordOutcome(id, tk, 'D', 1, MAX_DELIVERIES, '', what, '')
      redis.call('SET', base .. 'e:' .. id, MAX_DELIVERIES .. '\n\n' .. what)
      releaseUnique(id, r[4])
      redis.call('ZREM', lease, id)
      redis.call('HDEL', tk, 'k')
      redis.call('HSET', tk, 's', 'D', 'x', x + 1)
      redis.call('ZADD', dead, now, id)
      bump('dead')
    else
      touchReady(priorityOf(r[6]))
      redis.call('ZREM', lease, id)
      redis.call('HDEL', tk, 'k')
      redis.call('HSET', tk, 's', 'R', 'x', x + 1)
      pushReady(id, priorityOf(r[6]))
      bump('reaped')
    end
  end
  return #ids >= reapLimit
end
