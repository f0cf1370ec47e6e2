-- recur_advance: create a recurring schedule's next occurrences and advance its next tick, in one step; when a worker
-- is about to run an occurrence, also decide whether it runs (the misfire and overlap policies).
-- An occurrence is an ordinary task of the queue with the id <sid>:<tick ms>, due at its tick. The schedule keeps
-- n, the first tick not created yet, and w, the created ticks that have not started. Java computes the ticks (cron,
-- zones, DST) from n and passes them; this script decides with Redis TIME which are past. The compare-and-set on n
-- makes instances that race create each occurrence once.
-- KEYS (fixed 7, per item 0):
--   1 sched   ZSET    id -> due ms
--   2 ready   LIST    ready id hints
--   3 wake    LIST    wake tokens for idle dispatchers
--   4 tick    LIST    <= 1 token: the earliest due time changed
--   5 stats   HASH    counters
--   6 meta    HASH    v = layout version
--   7 r:<sid> HASH    the schedule (see recur_upsert)
--   derived from ARGV base (same hash tag; occurrence ids are made inside the script from the schedule id and its
--   ticks): t:<sid>:<tick> HASH task (field ad = the delivery count it was admitted to run with, rl = '1' when a
--   graceful stop or a redrive gave it back since), p:<sid>:<tick> STRING
--   payload envelope (an occurrence's opens with the header dt-recurring = sid)
-- ARGV: 1 base, 2 sid, 3 layout version, 4 fanoutBatch, 5 generation read with n, 6 n as read ('R' after a reset),
--   7 the tick of the occurrence about to run, or '' (only create), 8 lookahead (future occurrences to keep
--   created), 9 ticks Java counted as missed without listing them, 10 the tick after the last listed (-1: none),
--   11 the time Java planned the ticks from (its estimate of this script's now), 12 how far that may be from now (ms),
--   then the ticks from n on, ascending
-- Reply: {now, code ('O' done | 'T' done and more ticks needed | 'G' schedule gone | 'C' definition changed | 'M' n
--   moved | 'P' paused | 'K' planned from a time too far from now: nothing written, plan again from this now),
--   created, missed, verdict ('R' run | 'O' skip: overlap | 'X' skip: missed or superseded | 'P' skip: paused) or '',
--   next tick ms or -1}
--   or {now, 'LAYOUT', storedVersion} when the stored layout differs (nothing is written)
-- keys: fixed=7 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"

local sched, ready, wake, tick, stats, meta, hk = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local base, sid, layout, fanoutBatch = ARGV[1], ARGV[2], ARGV[3], int(ARGV[4])
local generation, expectedN, startArg = ARGV[5], ARGV[6], ARGV[7]
local lookahead, dropped, nextAfter = int(ARGV[8]), int(ARGV[9]), int(ARGV[10])
local plannedAt, margin = int(ARGV[11]), int(ARGV[12])
if not (#KEYS == 7 and #ARGV >= 12 and fanoutBatch and fanoutBatch >= 1 and lookahead and lookahead >= 1
    and dropped and nextAfter and plannedAt and margin and margin >= 0) then
  return redis.error_reply('ERR recur_advance: bad KEYS/ARGV')
end
local ticks = {}
for a = 13, #ARGV do
  local t = int(ARGV[a])
  if not t or (#ticks > 0 and t <= ticks[#ticks]) then return redis.error_reply('ERR recur_advance: bad tick') end
  ticks[#ticks + 1] = t
end
local st = nil
if startArg ~= '' then
  st = int(startArg)
  if not st then return redis.error_reply('ERR recur_advance: bad start tick') end
end

--- @include "fanout"

local stored = redis.call('HGET', meta, 'v')
if stored and stored ~= layout then return {now, 'LAYOUT', stored} end

local d = pread('HMGET', hk, 'g', 'n', 'w', 'ps', 'mp', 'mb', 'mt', 'op', 'ma', 'e', 'lr')
if d.err or not d[1] then return {now, 'G', 0, 0, st and 'X' or '', -1} end
if d[1] ~= generation then return {now, 'C', 0, 0, '', -1} end
if d[2] ~= expectedN then return {now, 'M', 0, 0, '', -1} end
-- Which ticks are old enough to be only counted, and where a reset sequence restarts, were planned from the caller's
-- estimate of this clock: a plan from an instance clock (or an estimate) too far off is refused, never applied.
if math.abs(plannedAt - now) > margin then return {now, 'K', 0, 0, '', -1} end

local win, lost = {}, {}
for t in string.gmatch(d[3] or '', '[^,]+') do
  -- Occurrences that are still there stay; cancel takes its occurrence out of w, so a created tick whose task is
  -- missing was lost with Redis data (or purged): it is created again (or counted missed). One dead-lettered or
  -- tombstoned leaves the window.
  local occurrence = int(t) and pread('HGET', base .. 't:' .. sid .. ':' .. int(t), 's')
  if occurrence == 'S' or occurrence == 'R' or occurrence == 'A' then
    win[#win + 1] = int(t)
  elseif int(t) and occurrence == false then
    lost[#lost + 1] = int(t)
  end
end
local function indexOf(list, t)
  for j, v in ipairs(list) do
    if v == t then return j end
  end
end

if d[4] == '1' then
  -- Paused: nothing is created and nothing counts as missed; an occurrence that comes due is skipped.
  local verdict = ''
  if st then
    local j = indexOf(win, st)
    if j then
      table.remove(win, j)
      redis.call('HSET', hk, 'w', table.concat(win, ','))
    end
    verdict = 'P'
  end
  return {now, 'P', 0, 0, verdict, -1}
end

local reset = expectedN == 'R'
local policy, bound, threshold = d[5], int(d[6]) or 1, int(d[7]) or 60000
local overlap, maxAttempts, envelope, lastRun = d[8], int(d[9]) or 1, d[10] or '{"h":{},"b":null}', d[11]

local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
local prevHead = head[2] and tonumber(head[2])
local created, lastCreated, anyReady, minDue = 0, nil, false, nil

-- Creates the occurrence of tick t, or adopts the occurrence already there under its id; false for a key that is not
-- a task hash or a task that is not this schedule's occurrence (left alone, and the tick is not run).
local occurrencePrefix = '{"h":{"dt-recurring":"' .. sid .. '"'
local function create(t)
  local id = sid .. ':' .. t
  local tk = base .. 't:' .. id
  local s = pread('HGET', tk, 's')
  if type(s) == 'table' then return false end
  if s and s ~= 'X' then
    -- Adopted only when it is this schedule's occurrence (its envelope opens with the schedule's header, which
    -- producers may not send): another task under the id is not run as the tick.
    local env = pread('GET', base .. 'p:' .. id)
    if not (type(env) == 'string' and string.sub(env, 1, #occurrencePrefix) == occurrencePrefix) then return false end
    if s == 'S' or s == 'R' then
      -- Created for an earlier definition and not started: it runs with the current payload and max attempts, so
      -- a changed definition takes effect from its next tick, not after the occurrences already created.
      if env ~= envelope then redis.call('SET', base .. 'p:' .. id, envelope) end
      redis.call('HSET', tk, 'm', maxAttempts)
    end
    return true
  end
  -- A new incarnation: an earlier occurrence's outcome record must never be read as this one's.
  redis.call('DEL', base .. 'o:' .. id)
  if s then redis.call('DEL', tk) end -- a cancelled tombstone counts as absent
  local state = t <= now and 'R' or 'S'
  redis.call('HSET', tk, 's', state, 'a', 0, 'v', 0, 'm', maxAttempts, 'f', 0, 'd', t, 'c', now)
  redis.call('SET', base .. 'p:' .. id, envelope)
  if state == 'R' then
    redis.call('RPUSH', ready, id)
    anyReady = true
  else
    redis.call('ZADD', sched, t, id)
    if not minDue or t < minDue then minDue = t end
  end
  created = created + 1
  if not lastCreated or t > lastCreated then lastCreated = t end
  return true
end

-- Misfires: created ticks not started, and ticks never created, more than the threshold in the past.
local late, keep = {}, {}
for _, t in ipairs(win) do
  if t < now - threshold then late[#late + 1] = {t, true} else keep[#keep + 1] = t end
end
for _, t in ipairs(lost) do
  if t < now - threshold then late[#late + 1] = {t, false} elseif create(t) then keep[#keep + 1] = t end
end
local i = 1
while i <= #ticks and ticks[i] <= now do
  local t = ticks[i]
  if reset then
    -- a restarted sequence begins after now: earlier ticks belong to the old definition or to a pause
  elseif t < now - threshold then
    late[#late + 1] = {t, false}
  elseif create(t) then
    keep[#keep + 1] = t -- due a moment ago: on time, it runs at once
  end
  i = i + 1
end
-- The misfire policy runs the latest missed ticks: in tick order, lost ones included.
table.sort(late, function(a, b) return a[1] < b[1] end)
-- A created occurrence whose tick is missed would only be skipped when it comes due: it is deleted now, unless a
-- worker holds it, so that a schedule nobody runs (its queue has no handler) keeps no more than its window.
local function dropMissed(t)
  local id = sid .. ':' .. t
  local tk = base .. 't:' .. id
  local s = pread('HGET', tk, 's')
  if s == 'S' or s == 'R' then
    redis.call('ZREM', sched, id)
    redis.call('DEL', tk, base .. 'p:' .. id)
    if s == 'R' then
      -- Its ready hint goes too when it is among the last 1,000 (a queue nobody runs keeps no growing list of
      -- hints); a deeper one is left, as cancel leaves one, for claim to skip, and counted as a ghost.
      if redis.call('LPOS', ready, id, 'RANK', -1, 'MAXLEN', 1000) then
        redis.call('LREM', ready, -1, id)
      else
        redis.call('HINCRBY', stats, 'ghost', 1)
      end
    end
  end
end
local missed = reset and 0 or dropped
local runLate = (policy == 'O' and 1) or (policy == 'A' and bound) or 0
for j, entry in ipairs(late) do
  if j > #late - runLate then
    -- the policy runs the latest missed ticks: keep those already created, create the others
    if entry[2] or create(entry[1]) then keep[#keep + 1] = entry[1] end
  else
    missed = missed + 1
    if entry[2] then dropMissed(entry[1]) end
  end
end

-- Keep `lookahead` future occurrences created, so the queue's timer fires each at its due instant.
local future = 0
for _, t in ipairs(keep) do
  if t > now then future = future + 1 end
end
while i <= #ticks and future < lookahead do
  if create(ticks[i]) then keep[#keep + 1] = ticks[i] end
  future = future + 1
  i = i + 1
end
local n, code = nextAfter, 'O'
if i <= #ticks then
  n = ticks[i]
elseif future < lookahead and nextAfter >= 0 then
  code = 'T'
end
table.sort(keep)

local verdict = ''
if st then
  local j = indexOf(keep, st)
  local stk = base .. 't:' .. sid .. ':' .. st
  if not j then
    -- Left the window when it was admitted: a run given back at a graceful stop (release.lua lowered its delivery
    -- count and set rl) is admitted again, as a crash's redelivery is; a second start without a release, and any
    -- other tick not in the window (missed or superseded), is not.
    -- ad holds the delivery count the occurrence was admitted with: a later delivery (after a crash or a reap)
    -- reruns it too, as does a redrive (rl).
    local r = pread('HMGET', stk, 'ad', 'rl', 'v')
    local ad = not r.err and int(r[1])
    if ad and (r[2] == '1' or (int(r[3]) or 0) > ad) then
      verdict = 'R'
      redis.call('HSET', stk, 'ad', math.max(int(r[3]) or 1, 1))
      redis.call('HDEL', stk, 'rl')
    else
      verdict = 'X'
    end
  else
    table.remove(keep, j)
    -- The previous occurrence has not finished while it runs, and while it waits for a retry or to run again after
    -- a crash (scheduled or ready once admitted): its next run would overlap this one.
    local previous = lastRun and lastRun ~= tostring(st)
      and pread('HMGET', base .. 't:' .. sid .. ':' .. lastRun, 's', 'ad')
    local unfinished = previous and not previous.err
      and (previous[1] == 'A' or ((previous[1] == 'S' or previous[1] == 'R') and int(previous[2]) ~= nil))
    if overlap == 'S' and unfinished then
      verdict = 'O'
      redis.call('HINCRBY', hk, 'co', 1)
    else
      verdict = 'R'
      -- The latest tick started: an older one admitted late does not hide the newer one's outcome.
      if not (int(lastRun) and int(lastRun) > st) then redis.call('HSET', hk, 'lr', st) end
      local v = pread('HGET', stk, 'v')
      if type(v) == 'string' then
        redis.call('HSET', stk, 'ad', math.max(int(v) or 1, 1))
        redis.call('HDEL', stk, 'rl')
      end
    end
  end
end

redis.call('HSET', hk, 'n', n, 'w', table.concat(keep, ','))
if created > 0 then
  redis.call('HINCRBY', hk, 'cc', created)
  redis.call('HSET', hk, 'l', lastCreated)
  redis.call('HINCRBY', stats, 'enq', created)
end
if missed > 0 then
  redis.call('HINCRBY', hk, 'cm', missed)
  redis.call('HSET', hk, 'lm', now)
end
if minDue and (not prevHead or minDue < prevHead) and redis.call('LLEN', tick) == 0 then
  redis.call('LPUSH', tick, 1)
end
if anyReady then fanout() end
return {now, code, created, missed, verdict, keep[1] or n}
