-- cancel: cancel one task by id: delete it when scheduled, tombstone it when ready, flag it when active.
-- KEYS (fixed 5, per item 0):
--   1 sched  ZSET    id -> due ms
--   2 stats  HASH    counters
--   3 t:<id> HASH    task
--   4 p:<id> STRING  payload envelope
--   5 e:<id> STRING  last error record
--   derived from ARGV base (same hash tag), not declared because only corrupt data touches them: dead ZSET, lease
--   ZSET; and u:<digest> STRING (the digest is read from the hash field u); r:<sid> HASH, the recurring schedule
--   of an occurrence (id <sid>:<tick>, payload opening with the header dt-recurring = sid)
-- ARGV: 1 base, 2 id, 3 tombstoneTtlMs
-- Reply: {now, code}; code: 'C' cancelled (was S or R) | 'Q' cancel requested (A; the worker sees it on its next
--   extend) | 'D' dead, not cancellable | 'N' not found (missing or already cancelled) | 'K' corrupt (dead-lettered)
-- keys: fixed=5 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "reasons"

local sched, stats, tk, pk, ek = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local base, id, tombstoneTtl = ARGV[1], ARGV[2], tonumber(ARGV[3])
if not (#KEYS == 5 and base and id and tombstoneTtl and tombstoneTtl == math.floor(tombstoneTtl)) then
  return redis.error_reply('ERR cancel: bad KEYS/ARGV')
end

--- @include "releaseUnique"
--- @include "outcome"

-- A cancelled occurrence of a recurring schedule leaves the schedule's window w: recur_advance then tells it from an
-- occurrence lost with Redis data, which it creates again. Only reads: returns the write to make, or nil.
local function windowWithout()
  local sid, tick = string.match(id, '^(.+):(%d+)$')
  if not (sid and #tick == 13) then return nil end
  local header = '{"h":{"dt-recurring":"' .. sid .. '"'
  local env = pread('GET', pk)
  if type(env) ~= 'string' or string.sub(env, 1, #header) ~= header then return nil end
  local hk = base .. 'r:' .. sid
  local w = pread('HGET', hk, 'w')
  if type(w) ~= 'string' then return nil end
  local kept = {}
  for t in string.gmatch(w, '[^,]+') do
    if t ~= tick then kept[#kept + 1] = t end
  end
  return {hk, table.concat(kept, ',')}
end

local r = pread('HMGET', tk, 's', 'u', 'pr', 'gh')
local s = not r.err and r[1]
if not r.err and not s and redis.call('EXISTS', tk) == 0 then return {now, 'N'} end
if s == 'X' then return {now, 'N'} end
if s == 'D' then return {now, 'D'} end
if s == 'A' then
  redis.call('HSET', tk, 'cr', 1) -- fail, release and reaping honour it; extend reports it
  return {now, 'Q'}
end

-- Each branch reads or touches the keys it did not declare (u:, lease, dead) before its first write: during a Cluster
-- slot migration such a key may already have moved, and pread raises there; raising after a write would leave the
-- task half-changed (out of sched but still scheduled), because Redis does not roll back.
if s == 'S' then
  local window = windowWithout()
  recordOutcome(id, tk, 'C', 0, '', '', '', '')
  releaseUnique(id, r[2])
  if window then redis.call('HSET', window[1], 'w', window[2]) end
  redis.call('ZREM', sched, id)
  redis.call('DEL', tk, pk, ek)
elseif s == 'R' then
  -- The ready hint stays (removing it is O(N)); the tombstone lets claim skip it and is counted as a ghost. It keeps
  -- the priority and the count of hints left behind (gh), so that a task created again with the id skips them too.
  local window = windowWithout()
  recordOutcome(id, tk, 'C', 0, '', '', '', '')
  releaseUnique(id, r[2])
  if window then redis.call('HSET', window[1], 'w', window[2]) end
  redis.call('DEL', tk, pk, ek)
  redis.call('HSET', tk, 's', 'X', 'gh', (tonumber(r[4]) or 0) + 1)
  if r[3] then redis.call('HSET', tk, 'pr', r[3]) end
  redis.call('PEXPIRE', tk, tombstoneTtl)
  redis.call('HINCRBY', stats, 'ghost', 1)
else
  -- Not a hash, no state, or an unknown state: park it in dead rather than guess. Its state is unknown,
  -- so take it out of every index a dead task must not be in (I1). The undeclared indexes are read first: a
  -- write to a key that moved raises exactly where a read of it does.
  pread('ZSCORE', base .. 'lease', id)
  pread('ZSCORE', base .. 'dead', id)
  redis.call('ZREM', sched, id)
  redis.call('ZREM', base .. 'lease', id)
  if not r.err then
    redis.call('HSET', tk, 's', 'D')
    redis.call('HDEL', tk, 'k')
  end
  redis.call('ZADD', base .. 'dead', now, id)
  redis.call('SET', ek, CORRUPT .. '\n\n' .. (r.err and 'task key is not a hash'
    or s and ('unknown state ' .. s) or 'task hash has no state'))
  redis.call('HINCRBY', stats, 'corrupt', 1)
  return {now, 'K'}
end
redis.call('HINCRBY', stats, 'canceled', 1)
return {now, 'C'}
