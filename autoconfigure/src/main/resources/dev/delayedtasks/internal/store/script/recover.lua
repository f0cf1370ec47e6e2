-- recover: give back, without penalty, the tasks leased by claims whose reply never reached the dispatcher (the call
--   timed out or the connection broke while Redis still ran it), so they run again at once instead of after their
--   lease expires. Every claim carries its own nonce; a lease token is '<nonce>:<fence>'.
-- KEYS (fixed 4, per item 0):
--   1 ready  LIST    ready id hints
--   2 lease  ZSET    id -> lease deadline ms
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 stats  HASH    counters
--   derived from ARGV base (same hash tag; the ids are found inside the script): t:<id> HASH, p:<id> STRING,
--   e:<id> STRING, u:<digest> STRING
-- ARGV: 1 base, 2 fanoutBatch, 3 scanLimit (newest leases looked at), 4 count, then count claim nonces
-- Reply: {now, released, cancelled}
-- keys: fixed=4 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"

local ready, lease, wake, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base = ARGV[1]

local fanoutBatch, scanLimit, count = int(ARGV[2]), int(ARGV[3]), int(ARGV[4])
if not (#KEYS == 4 and base and fanoutBatch and fanoutBatch >= 1 and scanLimit and scanLimit >= 1 and count
    and count >= 0 and #ARGV == 4 + count) then
  return redis.error_reply('ERR recover: bad KEYS/ARGV')
end

--- @include "releaseUnique"
--- @include "deleteTask"
--- @include "fanout"

local lost = {}
for i = 1, count do lost[ARGV[4 + i]] = true end

local released, cancelled = 0, 0
-- A lost claim leased its tasks last, so they sit among the latest deadlines.
for _, id in ipairs(redis.call('ZREVRANGE', lease, 0, scanLimit - 1)) do
  local tk = base .. 't:' .. id
  local r = pread('HMGET', tk, 'k', 'v', 'cr', 'u', 's', 'pr')
  local nonce = type(r) == 'table' and not r.err and type(r[1]) == 'string' and r[1]:match('^(.*):%d+$')
  local v = nonce and int(r[2])
  if nonce and lost[nonce] and v and r[5] == 'A' then
    if r[3] == '1' then
      -- Cancelled meanwhile: giving it back would run it again. Undeclared keys first, the index last.
      releaseUnique(id, r[4])
      deleteTask(id)
      redis.call('ZREM', lease, id)
      cancelled = cancelled + 1
    else
      touchReady(priorityOf(r[6]))
      redis.call('ZREM', lease, id)
      redis.call('HDEL', tk, 'k')
      redis.call('HSET', tk, 'v', math.max(v - 1, 0), 's', 'R')
      pushReady(id, priorityOf(r[6]), true) -- head: it was claimed in its turn
      released = released + 1
    end
  end
end

if cancelled > 0 then redis.call('HINCRBY', stats, 'canceled', cancelled) end
if released > 0 then
  redis.call('HINCRBY', stats, 'recovered', released)
  fanout()
end
freedSlots(cancelled) -- a cancelled task ends its lease too
return {now, released, cancelled}
