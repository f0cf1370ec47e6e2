-- fail: a leased task failed: retry it after a back-off computed in Java, or dead-letter it (token-checked).
-- KEYS (fixed 11, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 ready  LIST    ready id hints
--   3 lease  ZSET    id -> lease deadline ms
--   4 dead   ZSET    id -> dead-letter time ms
--   5 wake   LIST    wake tokens for idle dispatchers
--   6 tick   LIST    <= 1 token: the earliest due time changed
--   7 stats  HASH    counters
--   8 t:<id> HASH    task
--   9 p:<id> STRING  payload envelope
--  10 e:<id> STRING  last error record 'reason\ntype\nmessage', or for a dead letter with a stack trace
--                    '\30reason\ntype\ntrace\n\nmessage' (\30 = record separator; the trace has no blank line)
--  11 u:<digest> STRING uniqueness slot (base..'u:' if none; the hash field u is what is released)
--   derived from ARGV base (same hash tag): t:/p:/e:/u: keys of dead letters trimmed here (their ids are found
--   inside the script), u:<digest> STRING from the hash field u (the same key as KEYS[11] unless the data is
--   inconsistent)
-- ARGV: 1 base, 2 id, 3 token, 4 retryDelayMs (-1 = dead-letter now), 5 deadReason (used when retryDelayMs = -1),
--   6 exceptionType, 7 message (already truncated), 8 deadMaxCount (<= 0: no count limit),
--   9 deadMaxAgeMs (<= 0: no age limit), 10 trimLimit, 11 fanoutBatch, 12 stackTrace (bounded, without blank
--   lines, '' if none; kept with a dead letter only, so retrying tasks stay small)
-- Reply: {now, code, due ms or -1}; code: 'T' retry scheduled (due) | 'R' retry ready | 'D' dead | 'C' cancelled |
--   'S' stale (the lease expired, or another worker took the task over) | 'G' gone (the task no longer exists, or
--   this lease's failure was already recorded: a replay) | 'K' corrupt
-- keys: fixed=11 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "reasons"
--- @include "int"

local sched, ready, lease, dead, wake, tick, stats, tk, pk, ek =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local base, id, token, deadReason, exType, message, trace =
  ARGV[1], ARGV[2], ARGV[3], ARGV[5], ARGV[6], ARGV[7], ARGV[12]

local delay, maxCount, maxAge, trimLimit, fanoutBatch = int(ARGV[4]), int(ARGV[8]), int(ARGV[9]), int(ARGV[10]),
  int(ARGV[11])
if not (#KEYS == 11 and #ARGV == 12 and delay and delay >= -1 and maxCount and maxAge and trimLimit
    and trimLimit >= 0 and fanoutBatch and fanoutBatch >= 1) then
  return redis.error_reply('ERR fail: bad KEYS/ARGV')
end

--- @include "releaseUnique"
--- @include "deleteTask"
--- @include "fanout"
--- @include "trimDead"
--- @include "outcome"

local r = pread('HMGET', tk, 'k', 'a', 'm', 'cr', 'u', 'f', 'x', 'pr')
if r.err then
  redis.call('ZREM', lease, id)
  redis.call('ZADD', dead, now, id)
  redis.call('SET', ek, CORRUPT .. '\n\ntask key is not a hash')
  redis.call('HINCRBY', stats, 'corrupt', 1)
  return {now, 'K', -1}
end
if not r[1] and redis.call('EXISTS', tk) == 0 then return {now, 'G', -1} end
-- No lease now, the last claim (f) minted this token, and no lease expired since (x): this lease's failure was
-- already recorded, so this is a replay (Lettuce resends a command whose reply a reconnect lost), not a second run.
if not r[1] and not r[7] and r[6] == string.match(token, ':(%d+)$') then return {now, 'G', -1} end
if r[1] ~= token then
  redis.call('HINCRBY', stats, 'stale', 1)
  return {now, 'S', -1}
end
local a, m = int(r[2]), int(r[3])
touchReady(priorityOf(r[8])) -- before any write: a moved slot raises before the task changed

if r[4] == '1' then
  -- Cancelled while it ran: never retry it. The undeclared u: key first, the index last.
  recordOutcome(id, tk, 'C', 1, '', exType, message, '')
  releaseUnique(id, r[5])
  redis.call('DEL', tk, pk, ek)
  redis.call('ZREM', lease, id)
  redis.call('HINCRBY', stats, 'canceled', 1)
  freedSlots(1)
  return {now, 'C', -1}
end
redis.call('ZREM', lease, id)
redis.call('HDEL', tk, 'k', 'x') -- a recorded failure: the count of expired leases starts again
if not (a and m) then
  redis.call('HSET', tk, 's', 'D')
  redis.call('ZADD', dead, now, id)
  redis.call('SET', ek, CORRUPT .. '\n\nfield a or m is missing or not a number')
  redis.call('HINCRBY', stats, 'corrupt', 1)
  return {now, 'K', -1}
end

a = a + 1
if delay == -1 or a >= m then
  local reason = delay == -1 and deadReason or RETRIES_EXHAUSTED
  recordOutcome(id, tk, 'D', 1, reason, exType, message, '')
  redis.call('HSET', tk, 'a', a, 's', 'D')
  redis.call('ZADD', dead, now, id)
  if trace == '' then
    redis.call('SET', ek, reason .. '\n' .. exType .. '\n' .. message)
  else
    redis.call('SET', ek, '\30' .. reason .. '\n' .. exType .. '\n' .. trace .. '\n\n' .. message)
  end
  releaseUnique(id, r[5])
  redis.call('HINCRBY', stats, 'dead', 1)

  trimDead(trimLimit, maxAge, maxCount)
  freedSlots(1)
  return {now, 'D', -1}
end

local record = FAILED .. '\n' .. exType .. '\n' .. message
redis.call('HINCRBY', stats, 'retry', 1)
if delay == 0 then
  redis.call('HSET', tk, 'a', a, 's', 'R', 'd', now)
  redis.call('SET', ek, record)
  pushReady(id, priorityOf(r[8]))
  fanout()
  return {now, 'R', now}
end

local due = now + delay
local head = redis.call('ZRANGE', sched, 0, 0, 'WITHSCORES')
redis.call('HSET', tk, 'a', a, 's', 'S', 'd', due)
redis.call('SET', ek, record)
redis.call('ZADD', sched, due, id)
if (not head[2] or due < tonumber(head[2])) and redis.call('LLEN', tick) == 0 then redis.call('LPUSH', tick, 1) end
freedSlots(1)
return {now, 'T', due}
