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
--   derived from ARGV base (same hash tag; the ids are found inside the script): t:<id> HASH, p:<id> STRING,
--   e:<id> STRING, u:<digest> STRING
-- ARGV: 1 base, 2 n, 3 leaseMs, 4 nonce, 5 promoteLimit, 6 reapLimit, 7 graceMs, 8 fanoutBatch, 9 maxDeliveries,
--   10 scanLimit (max hints popped in all, invalid ones included),
--   11 byteBudget (stop adding items once the payload bytes reach it; at least one item is always returned),
--   12 expiredTo ('D': a ready task past its expiry (field xa) becomes a dead letter with reason 'expired';
--   'X': it is deleted),
--   13 rearmMs (the timer owner promotes at least this often: a lease that ends later, grace included, needs no tick)
-- Reply: {now, nextDue or -1, earliestLease or -1, more (0/1), paused (0/1), itemCount,
--   expired (id, a, c and xa of each task it ended because it expired, space-separated) or '',
--   throttled (the queue's flow control left ready tasks behind: 0 until a lease ends, else the Redis time the rate
--   window lets one more lease; -1 not throttled),
--   then per item 9 fields: id, token, envelope, a, v (after increment), m, d, c, u or ''}
-- keys: fixed=8 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"

local sched, ready, lease, dead, wake, tick, stats, meta =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local base, nonce, expiredTo = ARGV[1], ARGV[4], ARGV[12]

local n, leaseMs, promoteLimit, reapLimit, graceMs, fanoutBatch, maxDeliveries, scanLimit, byteBudget =
  int(ARGV[2]), int(ARGV[3]), int(ARGV[5]), int(ARGV[6]), int(ARGV[7]), int(ARGV[8]), int(ARGV[9]),
  int(ARGV[10]), int(ARGV[11])
local rearmMs = int(ARGV[13])
if not (#KEYS == 8 and n and n >= 0 and leaseMs and leaseMs > 0 and promoteLimit and promoteLimit >= 0
    and reapLimit and reapLimit >= 0 and graceMs and graceMs >= 0 and fanoutBatch and fanoutBatch >= 1
    and maxDeliveries and scanLimit and scanLimit >= 0 and byteBudget and nonce
    and (expiredTo == 'D' or expiredTo == 'X') and rearmMs and rearmMs >= 0) then
  return redis.error_reply('ERR claim: bad KEYS/ARGV')
end

--- @include "promoteAndReap"
--- @include "leaseReady"
--- @include "fanout"

local more = promoteDue()
more = reapExpired() or more
local paused = redis.call('HGET', meta, 'paused') == '1'

local reply = {now, 0, 0, 0, paused and 1 or 0, 0, '', -1}
local claimed = 0
if not paused then
  local leaseWasEmpty = redis.call('ZCARD', lease) == 0
  local leftBehind
  claimed, leftBehind, reply[8] = leaseReady(reply, n, leaseMs, nonce, scanLimit, byteBudget)
  more = more or leftBehind
  -- The first lease is a new earliest deadline, but the owner, which wakes at least every rearmMs, only needs to
  -- hear of it when it would be reaped before then: otherwise the tick costs a promote call per trickled task.
  if claimed > 0 and leaseWasEmpty and leaseMs + graceMs < rearmMs and redis.call('LLEN', tick) == 0 then
    redis.call('LPUSH', tick, 1)
  end
  fanout()
end
flushCounts()

reply[2], reply[3], reply[4], reply[6], reply[7] = headScore(sched), headScore(lease), more and 1 or 0, claimed,
  table.concat(expired, ' ')
return reply
