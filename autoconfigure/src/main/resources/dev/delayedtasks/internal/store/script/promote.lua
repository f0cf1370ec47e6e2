-- promote: the timer owner's tick (promote due tasks, reap expired leases, fan out); also "become owner" and "resign".
-- KEYS (fixed 10, per item 0):
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
--  10 meta   HASH    paused = '1' while the queue is paused
--   derived from ARGV base (same hash tag; the ids are found inside the script): t:<id> HASH, p:<id> STRING,
--   e:<id> STRING, u:<digest> STRING
-- ARGV: 1 base, 2 ownerId, 3 timerTtlMs (0 = resign), 4 promoteLimit, 5 reapLimit, 6 graceMs, 7 fanoutBatch,
--   8 maxDeliveries, 9 tickConsumed (1: the caller popped a tick token for this call),
--   10 hand-off ('0' none | '<nonce> <n> <leaseMs> <scanLimit> <byteBudget> <expiredTo D|X>': an owner whose idle
--   dispatcher has room for n tasks leases up to n ready tasks for it after promoting, as claim would)
-- Reply: {now, owner (1/0), ttl ms, nextDue or -1, earliestLease or -1, more (0/1), itemCount,
--   expired (id, a, c and xa of each task it ended because it expired, space-separated) or '',
--   then per item 9 fields: id, token, envelope, a, v (after increment), m, d, c, u or ''}
--   resign: {now, 0, -2, -1, -1, 0, 0, ''}; another owner holds the timer: {now, 0, PTTL timer, -1, -1, 0, 0, ''}
-- keys: fixed=10 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"

local sched, ready, lease, dead, wake, tick, timer, stats, handover, meta =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local base, ownerId = ARGV[1], ARGV[2]

local ttl, promoteLimit, reapLimit, graceMs, fanoutBatch, maxDeliveries, tickConsumed =
  int(ARGV[3]), int(ARGV[4]), int(ARGV[5]), int(ARGV[6]), int(ARGV[7]), int(ARGV[8]), ARGV[9] == '1'
if not (#KEYS == 10 and ownerId and ttl and ttl >= 0 and promoteLimit and promoteLimit >= 0 and reapLimit
    and reapLimit >= 0 and graceMs and graceMs >= 0 and fanoutBatch and fanoutBatch >= 1 and maxDeliveries) then
  return redis.error_reply('ERR promote: bad KEYS/ARGV')
end
local handoffNonce, handoffMax, handoffLeaseMs, handoffScan, handoffBudget
local expiredTo = nil
if ARGV[10] and ARGV[10] ~= '0' then
  local nonce, n, ms, scan, budget, to = string.match(ARGV[10], '^(%S+) (%d+) (%d+) (%d+) (%d+) ([DX])$')
  handoffNonce, handoffMax, handoffLeaseMs, handoffScan, handoffBudget, expiredTo =
    nonce, int(n), int(ms), int(scan), int(budget), to
  if not (handoffNonce and handoffMax and handoffLeaseMs and handoffLeaseMs > 0 and handoffScan
      and handoffBudget) then
    return redis.error_reply('ERR promote: bad hand-off argument')
  end
end

local own = redis.call('GET', timer)
if ttl == 0 then
  if own == ownerId then
    redis.call('DEL', timer)
    if redis.call('LLEN', handover) == 0 then redis.call('LPUSH', handover, 1) end
  end
  return {now, 0, -2, -1, -1, 0, 0, ''}
end
if own and own ~= ownerId then
  -- A caller whose owner flag was stale popped the owner's tick: give it back, or the owner re-arms late.
  if tickConsumed and redis.call('LLEN', tick) == 0 then redis.call('LPUSH', tick, 1) end
  return {now, 0, redis.call('PTTL', timer), -1, -1, 0, 0, ''}
end
redis.call('SET', timer, ownerId, 'PX', ttl)

--- @include "promoteAndReap"
--- @include "leaseReady"
--- @include "fanout"

local more = promoteDue()
more = reapExpired() or more
local reply = {now, 1, ttl, 0, 0, 0, 0, ''}
-- A paused queue is not claimed: waking its dispatchers would only make them spin. Resume wakes them.
if redis.call('HGET', meta, 'paused') ~= '1' then
  -- Tasks left behind are the dispatchers' to claim (the wake tokens say so), not a reason to promote again soon.
  if handoffNonce and handoffMax > 0 then
    reply[7] = leaseReady(reply, handoffMax, handoffLeaseMs, handoffNonce, handoffScan, handoffBudget)
  end
  fanout()
end
flushCounts()
reply[4], reply[5], reply[6], reply[8] =
  headScore(sched), headScore(lease), more and 1 or 0, table.concat(expired, ' ')
return reply
