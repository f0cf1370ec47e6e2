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
--- @include "fanout"

local more = promoteDue()
more = reapExpired() or more
local paused = redis.call('HGET', meta, 'paused') == '1'

-- The rule of Names.checkTaskId (1-64 ASCII letters, digits, '.', '-', '_', ':'): Java cannot take an id that breaks
-- it, so leasing one would fail the whole claim, and the same hint would come back at the head for ever.
local function validId(id)
  return #id >= 1 and #id <= 64 and not string.find(id, '[^A-Za-z0-9%.%-_:]')
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

local reply = {now, 0, 0, 0, paused and 1 or 0, 0, ''}
local claimed = 0
if not paused then
  local leaseWasEmpty = redis.call('ZCARD', lease) == 0
  local ghosts = int(redis.call('HGET', stats, 'ghost')) or 0
  local skipped, pops, bytes = 0, 0, 0
  while claimed < n and pops < scanLimit do
    if claimed > 0 and bytes >= byteBudget then
      more = more or redis.call('LLEN', ready) > 0
      break
    end
    -- Peek, read, then pop: a read that raises (a moved slot) must not lose the hint.
    local id = redis.call('LINDEX', ready, 0)
    if not id then break end
    local tk = base .. 't:' .. id
    local status, r = readTask(tk, 'a', 'v', 'm', 'f', 'd', 'c', 'u', 'xa')
    local payload = (status == 'ok' and r[1] == 'R') and pread('GET', base .. 'p:' .. id) or nil
    -- corrupt() may still raise at its undeclared e: key, so the hint goes only after it.
    if status == 'missing' or (status == 'ok' and r[1] ~= 'R') then
      skipped = skipped + 1 -- a hint left behind by cancel, reschedule or an expired tombstone
    elseif status ~= 'ok' then
      corrupt(id, status)
    end
    local a, v, m, f, d, c = int(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7])
    local leasable = status == 'ok' and r[1] == 'R'
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
    redis.call('LPOP', ready)
    pops = pops + 1
    if leasable then
      -- The fence comes from a partition-wide counter, not the task's own: a task re-created with the same id
      -- starts again at f = 0, and a per-task count would hand an old lease's token to the new task.
      f, v = redis.call('HINCRBY', stats, 'fence', 1), v + 1
      local token = nonce .. ':' .. f
      redis.call('HSET', tk, 's', 'A', 'k', token, 'f', f, 'v', v)
      redis.call('ZADD', lease, now + leaseMs, id)
      claimed = claimed + 1
      bytes = bytes + #payload
      for _, x in ipairs({id, token, payload, a, v, m, d, c, r[8] or ''}) do reply[#reply + 1] = x end
    end
  end
  if skipped > 0 and ghosts > 0 then bump('ghost', -math.min(skipped, ghosts)) end
  if claimed > 0 then
    bump('claimed', claimed)
    -- The first lease is a new earliest deadline, but the owner, which wakes at least every rearmMs, only needs to
    -- hear of it when it would be reaped before then: otherwise the tick costs a promote call per trickled task.
    if leaseWasEmpty and leaseMs + graceMs < rearmMs and redis.call('LLEN', tick) == 0 then
      redis.call('LPUSH', tick, 1)
    end
  end
  if pops > 0 and (claimed >= n or pops >= scanLimit) and redis.call('LLEN', ready) > 0 then more = true end
  fanout()
end
flushCounts()

reply[2], reply[3], reply[4], reply[6], reply[7] = headScore(sched), headScore(lease), more and 1 or 0, claimed,
  table.concat(expired, ' ')
return reply
