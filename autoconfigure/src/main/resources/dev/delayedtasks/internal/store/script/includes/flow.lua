-- flow: a queue's flow control, from its meta hash's field
-- fl = '<rateCount> <rateWindowMs> <globalConcurrency>[ <keyRateCount> <keyRateWindowMs>]'
-- (0 turns that limit off; no field: no limits). The rate limit is a sliding window in Redis time: the ZSET starts
-- holds the Redis time of every lease of the last rateWindowMs (member: the lease's fence, unique in the
-- partition), and no lease is made while rateCount of them lie within the window, so no span of rateWindowMs ever
-- holds more than rateCount leases. The global concurrency counts the entries of lease: a lease counts until it
-- ends (ack, fail, release, recover, or reaped once its deadline and the grace have passed). The field fh holds the
-- Redis time until which a handler's "slow down" holds the whole queue (release.lua): no lease before it.
-- The rate limit per key is the same sliding window per rate key (task field rk): the ZSET ks:<key> holds the Redis
-- time of the key's leases of the last keyRateWindowMs. A task whose key is at its limit is set aside (keyWait):
-- back in sched, state S, field kw = the Redis time its key has room for it, so that the timer brings it back then
-- and the tasks of other keys behind it run meanwhile. The key's later tasks queue up behind it: kp:<key> holds the
-- latest instant given to a task of the key (keyWait), and each next one gets keyRateWindowMs / keyRateCount later.
-- Both keys expire once idle: ks:<key> a window after its last lease, kp:<key> at its latest instant. A handler's
-- "slow down" for its task's key (release.lua) holds the key: kp:<key> field h, the Redis time before which no task of
-- the key is leased (each is set aside until then, the key's line continuing after it).
-- A task's cost (field w, 1 when absent, at most the limit's count) is how many starts its lease counts in a window:
-- one entry per unit (members '<fence>', '<fence>.2', ...), so the windows hold at most count entries still.
-- uses: base, now
--- @include "int"
--- @include "queueMeta"
--- @include "priorities"

-- The limits, or nil for none (an unreadable field limits nothing: only this library writes it).
local flowRead, flowReadDone
local function flowLimits()
  if flowReadDone then return flowRead end
  flowReadDone = true
  flowRead = nil
  local m = queueMeta()
  local hold = int(m[2]) or 0
  if hold <= now then hold = 0 end
  local count, window, cap, keyCount, keyWindow
  if m[1] then
    count, window, cap, keyCount, keyWindow = string.match(m[1], '^(%d+) (%d+) (%d+) (%d+) (%d+)$')
    if not count then
      count, window, cap = string.match(m[1], '^(%d+) (%d+) (%d+)$')
      keyCount, keyWindow = 0, 0
    end
  end
  count, window, cap, keyCount, keyWindow = int(count), int(window), int(cap), int(keyCount), int(keyWindow)
  if not (count and window and cap and keyCount and keyWindow) or (count == 0 and cap == 0 and keyCount == 0)
      or (count > 0 and window <= 0) or (keyCount > 0 and keyWindow <= 0) then
    if hold == 0 then return nil end
    count, window, cap, keyCount, keyWindow = 0, 0, 0, 0, 0
  end
  flowRead = {count = count, window = window, cap = cap, keyCount = keyCount, keyWindow = keyWindow, hold = hold}
  return flowRead
end

-- How many of n tasks the limits let one call lease now (each costing 1; limits.free keeps the starts left in the
-- rate window, for the tasks that cost more).
local function flowRoom(limits, n)
  if not limits then return n end
  if limits.hold > 0 then return 0 end
  if limits.cap > 0 then n = math.min(n, limits.cap - redis.call('ZCARD', base .. 'lease')) end
  if limits.count > 0 and n > 0 then
    redis.call('ZREMRANGEBYSCORE', base .. 'starts', '-inf', now - limits.window)
    limits.free = limits.count - redis.call('ZCARD', base .. 'starts')
    n = math.min(n, limits.free)
  end
  return math.max(n, 0)
end

-- A task's cost against a window of count starts: its field w, 1 when absent or unreadable, at most count.
local function costOf(field, count)
  local w = int(field) or 1
  return math.min(math.max(w, 1), count)
end

-- 0 when the window (ZSET of start times, already trimmed to windowMs) has room for cost more starts, else the Redis
-- time enough of its oldest entries have left it.
local function windowFree(key, count, windowMs, cost)
  local k = redis.call('ZCARD', key)
  if k + cost <= count then return 0 end
  local e = redis.call('ZRANGE', key, k - count + cost - 1, k - count + cost - 1, 'WITHSCORES')
  return (int(e[2]) or now) + windowMs
end

-- Adds the entries of leases (their fences and costs, in pairs) to a window's ZSET, which expires with its last
-- entry. One ZADD takes at most 500 entries: unpack refuses a few thousand values, and a window of count 10,000 with
-- costly tasks would otherwise fail every lease.
local function windowStarted(key, windowMs, started)
  local args = {}
  local function add(member)
    args[#args + 1] = now; args[#args + 1] = member
    if #args >= 1000 then
      redis.call('ZADD', key, unpack(args))
      args = {}
    end
  end
  for i = 1, #started, 2 do
    add(started[i])
    for unit = 2, started[i + 1] do add(started[i] .. '.' .. unit) end
  end
  if #args > 0 then redis.call('ZADD', key, unpack(args)) end
  redis.call('PEXPIRE', key, windowMs)
end

-- 0 when a task of rate key rk may be leased now, else the Redis time to set it aside until. kp:<key> is a hash: e,
-- the end of the key's line (the latest instant given to a new task of the key), and r, the latest instant given to a
-- task coming back. A task coming back from being set aside (returning) is not put behind the key's later tasks: it
-- waits only for the key's window, and when it finds it full again (late, or after a pause or a hold) it gets the
-- instant the window has room, at least 1 ms after the last one given to a returning task, so that those coming back
-- together keep their order (members of equal score would come back in id order).
local function keyWait(limits, rk, returning, cost)
  local ks, kp = base .. 'ks:' .. rk, base .. 'kp:' .. rk
  local m = redis.call('HMGET', kp, 'e', 'r', 'h')
  local lineEnd, lastBack, hold = int(m[1]) or 0, int(m[2]) or 0, int(m[3]) or 0
  local slot
  if hold > now and returning then
    slot = math.max(hold, lastBack + 1)
    lastBack = slot
  elseif hold > now and lineEnd <= hold then
    -- The first new task of a held key: its line starts 1 ms after the hold, behind those coming back at its end.
    slot = hold + 1
    lineEnd = slot
  elseif lineEnd > now and not returning then
    slot = lineEnd + math.max(1, math.ceil(cost * limits.keyWindow / limits.keyCount))
    lineEnd = slot
  else
    redis.call('ZREMRANGEBYSCORE', ks, '-inf', now - limits.keyWindow)
    slot = windowFree(ks, limits.keyCount, limits.keyWindow, cost)
    if slot == 0 then return 0 end
    if returning then
      slot = math.max(slot, lastBack + 1)
      lastBack = slot
    else
      -- A line starts 1 ms after the window frees: a task coming back that finds the window full gets that very
      -- instant, so it comes back ahead of the line rather than tied with it (ties come back in id order).
      slot = slot + 1
    end
    lineEnd = math.max(lineEnd, slot)
  end
  redis.call('HSET', kp, 'e', lineEnd, 'r', lastBack)
  redis.call('PEXPIRE', kp, math.max(1, math.max(lineEnd, lastBack, hold) - now))
  return slot
end

-- Holds the whole queue until untilMs (meta field fh; a longer hold in force stays), as the next read of the limits
-- in this call sees it too.
local function holdQueue(untilMs)
  local held = int(redis.call('HGET', base .. 'meta', 'fh')) or 0
  if held < untilMs then redis.call('HSET', base .. 'meta', 'fh', untilMs) end
  forgetQueueMeta()
  flowReadDone = false
end

-- Holds rate key rk until untilMs (kp:<key> field h; a longer hold in force stays) and returns the hold's end, the
-- instant the caller sets its task aside until: as the latest given to a task coming back, so that the key's other
-- tasks coming back then follow it.
local function holdKey(rk, untilMs)
  local kp = base .. 'kp:' .. rk
  local m = redis.call('HMGET', kp, 'e', 'r', 'h')
  local hold = math.max(int(m[3]) or 0, untilMs)
  local lastBack = math.max(int(m[2]) or 0, hold)
  redis.call('HSET', kp, 'h', hold, 'r', lastBack)
  redis.call('PEXPIRE', kp, math.max(1, math.max(int(m[1]) or 0, lastBack) - now))
  return hold
end

-- Counts a lease of rate key rk against its window.
local function keyStarted(limits, rk, fence, cost)
  windowStarted(base .. 'ks:' .. rk, limits.keyWindow, {fence, cost})
end

-- Counts leases (their fences and costs, in pairs) against the rate limit.
local function flowStarted(limits, started)
  if limits and limits.count > 0 and #started > 0 then windowStarted(base .. 'starts', limits.window, started) end
end

-- When the queue may lease again once the limits stopped a call whose next task costs cost: the end of a hold, 0
-- when a lease ends (global concurrency), the Redis time the rate window has room for that cost, or -1 when the
-- limits leave room.
local function flowWait(limits, cost)
  if not limits then return -1 end
  if limits.hold > 0 then return limits.hold end
  if limits.cap > 0 and redis.call('ZCARD', base .. 'lease') >= limits.cap then return 0 end
  if limits.count > 0 then
    local at = windowFree(base .. 'starts', limits.count, limits.window, math.min(cost, limits.count))
    if at > 0 then return at end
  end
  return -1
end

-- Leases ended here: a queue at its global concurrency gets no wake tokens from fanout, so one idle dispatcher per
-- freed slot is woken while tasks wait in ready.
local function freedSlots(count)
  if count <= 0 then return end
  local limits = flowLimits()
  if not (limits and limits.cap > 0) then return end
  local want = math.min(count, readyCount(), 64,
    limits.cap - redis.call('ZCARD', base .. 'lease')) - redis.call('LLEN', base .. 'wake')
  for _ = 1, want do redis.call('RPUSH', base .. 'wake', 1) end
end
