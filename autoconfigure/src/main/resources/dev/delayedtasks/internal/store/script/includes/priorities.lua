-- priorities: a task's priority (field pr, -10 to 10, absent for 0) picks the list its ready hint waits in: ready for
-- 0, ready:<p> for the others, so that each priority keeps the head and tail moves of one list. The ZSET levels holds
-- the priorities other than 0 whose list may hold hints (member and score: the priority), and meta field pr = '1'
-- once the queue has used one: a queue that never did reads the same keys as before (pr comes in the HMGET of
-- includes/queueMeta.lua that flow control makes anyway).
-- uses: base
--- @include "queueMeta"

local MIN_PRIORITY, MAX_PRIORITY = -10, 10

-- A stored priority; 0 when absent or unreadable (only this library writes it).
local function priorityOf(field)
  local p = tonumber(field)
  if not p or p ~= math.floor(p) or p < MIN_PRIORITY or p > MAX_PRIORITY then return 0 end
  return p
end

local function readyKey(p)
  if p == 0 then return base .. 'ready' end
  return base .. 'ready:' .. p
end

-- The ready lists in claim order, highest priority first ({key, priority} each); read once per call unless a push
-- adds a priority.
local readyLevels
local function readyLists()
  if readyLevels then return readyLevels end
  readyLevels = {}
  local above, below = {}, {}
  if queueMeta()[3] == '1' then
    for _, p in ipairs(redis.call('ZREVRANGE', base .. 'levels', 0, -1)) do
      local level = priorityOf(p)
      if level > 0 then above[#above + 1] = level elseif level < 0 then below[#below + 1] = level end
    end
  end
  for _, p in ipairs(above) do readyLevels[#readyLevels + 1] = {readyKey(p), p} end
  readyLevels[#readyLevels + 1] = {base .. 'ready', 0}
  for _, p in ipairs(below) do readyLevels[#readyLevels + 1] = {readyKey(p), p} end
  return readyLevels
end

-- Ready hints of every priority.
local function readyCount()
  local n = 0
  for _, level in ipairs(readyLists()) do n = n + redis.call('LLEN', level[1]) end
  return n
end

-- Reads the keys pushReady writes for priority p and meta, none of them declared: called before a task's first write,
-- so that on a Cluster slot being migrated a key that is not here yet (an empty list is a missing key) raises before
-- the task changed, not half-way.
local function touchReady(p)
  if p ~= 0 then
    redis.call('LLEN', readyKey(p))
    redis.call('ZCARD', base .. 'levels')
    queueMeta()
  end
end

-- Puts a ready task's hint at the tail of its priority's list, or at its head (a task that already had its turn).
local function pushReady(id, p, head)
  if p ~= 0 then
    redis.call('ZADD', base .. 'levels', p, p)
    if queueMeta()[3] ~= '1' then
      redis.call('HSET', base .. 'meta', 'pr', '1')
      queueMeta()[3] = '1'
    end
    local known = false
    for _, level in ipairs(readyLevels or {}) do known = known or level[2] == p end
    if not known then readyLevels = nil end
  end
  if head then
    redis.call('LPUSH', readyKey(p), id)
  else
    redis.call('RPUSH', readyKey(p), id)
  end
end

-- A priority whose list is empty leaves levels (its list is gone with its last hint).
local function levelEmptied(p)
  if p ~= 0 then redis.call('ZREM', base .. 'levels', p) end
end
