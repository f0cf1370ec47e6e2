-- leaseReady: the lease of claim and promote: pop ids from the head of the ready lists, highest priority first
-- (includes/priorities.lua), and lease each task that is ready (a fence from the partition-wide counter, token
-- '<nonce>:<fence>', state A, one more delivery, an entry in lease at now + leaseMs), appending 9 fields per task to a
-- reply (id, token, envelope, a, v, m, d, c, u or ''). Hints of cancelled or moved tasks are skipped, broken data goes
-- to dead as corrupt, a task past its expiry (xa) ends as expired (id, a, c and xa of each appended to the list
-- expired). The queue's flow control (includes/flow.lua) may lease fewer than asked, and sets aside in sched the tasks
-- of a rate key at its limit (a tick token tells the timer owner when one of them is the new earliest due time).
-- uses: base, now, sched, lease, dead, tick, stats, expiredTo
--- @include "pread"
--- @include "int"
--- @include "releaseUnique"
--- @include "deleteTask"
--- @include "reasons"
--- @include "outcome"
--- @include "ids"
--- @include "flow"
--- @include "priorities"

-- A task set aside for its rate key: back in sched until its key has room (state S, kw = that instant).
local asideHead, asideMin
local function setAside(id, tk, slot)
  if asideHead == nil then
    local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
    asideHead = head[2] and tonumber(head[2]) or false
  end
  redis.call('HSET', tk, 's', 'S', 'kw', slot)
  redis.call('ZADD', sched, slot, id)
  if not asideMin or slot < asideMin then asideMin = slot end
  bump('aside')
end

-- A task that has not started by its expiry is never run: it ends here, the one place a run starts.
local expired = {}
local function expire(id, tk, r)
  recordOutcome(id, tk, 'X', 0, EXPIRED, '', 'the task was not started before it expired', '')
  releaseUnique(id, r[8])
  if expiredTo == 'D' then
    redis.call('SET', base .. 'e:' .. id, EXPIRED .. '\n\nthe task was not started before it expired')
    redis.call('HSET', tk, 's', 'D')
    redis.call('ZADD', dead, now, id)
  else
    deleteTask(id)
  end
  for _, x in ipairs({id, r[2], r[7], r[9]}) do expired[#expired + 1] = x end
  bump('expired')
end

-- Leases up to n tasks, popping at most scanLimit hints and stopping once the payloads reach byteBudget (one task at
-- least); returns how many it leased, whether it left ready tasks behind, and, when the flow control stopped it with
-- tasks left, when the queue may lease again (flowWait; else -1).
local function leaseReady(reply, n, leaseMs, nonce, scanLimit, byteBudget)
  local limits = flowLimits()
  local room = flowRoom(limits, n)
  local keyed = limits and limits.keyCount > 0
  local started, stoppedBy = {}, nil
  local claimed, more = 0, false
  local ghosts = int(redis.call('HGET', stats, 'ghost')) or 0
  local lists, li = readyLists(), 1
  -- The first hint from list li on; a priority whose list is empty leaves levels.
  local function peekReady()
    while true do
      local id = redis.call('LINDEX', lists[li][1], 0)
      if id then return id end
      levelEmptied(lists[li][2])
      if li == #lists then return nil end
      li = li + 1
    end
  end
  local skipped, pops, bytes = 0, 0, 0
  while claimed < room and pops < scanLimit do
    if claimed > 0 and bytes >= byteBudget then
      more = readyCount() > 0
      break
    end
    -- Peek, read, then pop: a read that raises (a moved slot) must not lose the hint.
    local id = peekReady()
    if not id then break end
    local tk = base .. 't:' .. id
    local status, r = readTask(tk, 'a', 'v', 'm', 'f', 'd', 'c', 'u', 'xa', 'rk', 'kw', 'w', 'pr', 'gh')
    local payload = (status == 'ok' and r[1] == 'R') and pread('GET', base .. 'p:' .. id) or nil
    -- corrupt() may still raise at its undeclared e: key, so the hint goes only after it.
    -- A hint left behind: by cancel, reschedule or an expired tombstone (state), by an earlier task with the id in
    -- another priority's list (the new one has its own in its list), or one of the gh the task left in its own list
    -- before its current one (which comes after them).
    local otherList = status == 'ok' and validId(id) and priorityOf(r[13]) ~= lists[li][2]
    local leftBehind = status == 'ok' and not otherList and (int(r[14]) or 0) > 0
    if status == 'missing' or (status == 'ok' and r[1] ~= 'R') or otherList or leftBehind then
      skipped = skipped + 1
      if leftBehind then
        if int(r[14]) > 1 then redis.call('HINCRBY', tk, 'gh', -1) else redis.call('HDEL', tk, 'gh') end
      end
    elseif status ~= 'ok' then
      corrupt(id, status)
    end
    local a, v, m, f, d, c = int(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7])
    local leasable = status == 'ok' and r[1] == 'R' and not otherList and not leftBehind
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
    local xa = int(r[9])
    if leasable and xa and xa <= now then
      expire(id, tk, r)
      leasable = false
    end
    -- A task that costs more than the rate window has left waits at the head, in its turn.
    local w = (leasable and limits and limits.count > 0) and costOf(r[12], limits.count) or 1
    if leasable and limits and limits.count > 0 and w > limits.free then
      stoppedBy = w
      break
    end
    -- A rate key that is not a valid id (not this library's data) limits nothing.
    local rk = leasable and keyed and r[10] and validId(r[10]) and r[10]
    -- Its undeclared keys are read before the pop: a moved slot raises before anything changed.
    if rk then redis.call('EXISTS', base .. 'kp:' .. rk, base .. 'ks:' .. rk) end
    redis.call('LPOP', lists[li][1])
    pops = pops + 1
    if rk then
      local slot = keyWait(limits, rk, r[11] and true or false, costOf(r[12], limits.keyCount))
      if slot > 0 then
        setAside(id, tk, slot)
        leasable = false
      end
    end
    if leasable then
      -- The fence comes from a partition-wide counter, not the task's own: a task re-created with the same id
      -- starts again at f = 0, and a per-task count would hand an old lease's token to the new task.
      f, v = redis.call('HINCRBY', stats, 'fence', 1), v + 1
      local token = nonce .. ':' .. f
      redis.call('HSET', tk, 's', 'A', 'k', token, 'f', f, 'v', v)
      if r[11] then redis.call('HDEL', tk, 'kw') end
      if rk then keyStarted(limits, rk, f, costOf(r[12], limits.keyCount)) end
      if limits and limits.count > 0 then
        limits.free = limits.free - w
        started[#started + 1] = f
        started[#started + 1] = w
      end
      redis.call('ZADD', lease, now + leaseMs, id)
      claimed = claimed + 1
      bytes = bytes + #payload
      for _, x in ipairs({id, token, payload, a, v, m, d, c, r[8] or ''}) do reply[#reply + 1] = x end
    end
  end
  if skipped > 0 and ghosts > 0 then bump('ghost', -math.min(skipped, ghosts)) end
  if claimed > 0 then bump('claimed', claimed) end
  flowStarted(limits, started)
  if asideMin and (not asideHead or asideMin < asideHead) and redis.call('LLEN', tick) == 0 then
    redis.call('LPUSH', tick, 1)
  end
  -- Ghosts (stale hints) are not ready tasks: a queue with only those left is idle, not throttled.
  if (stoppedBy or (room < n and claimed >= room)) and readyCount() - ghosts + math.min(skipped, ghosts) > 0 then
    -- The limits stopped it, not a budget of this call: claiming again at once would find no room.
    return claimed, false, flowWait(limits, stoppedBy or 1)
  end
  if pops > 0 and (claimed >= n or pops >= scanLimit) and readyCount() > 0 then more = true end
  return claimed, more, -1
end
