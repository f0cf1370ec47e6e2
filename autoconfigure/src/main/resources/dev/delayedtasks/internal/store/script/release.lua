-- release: graceful shutdown, a run whose lease ran out, or a handler's "slow down": hand leased tasks back to the
-- head of ready without counting the delivery (a token that no longer matches is counted stale: another worker has
-- the task). A hold (holdMs > 0) also holds the whole queue until now + holdMs (meta field fh, includes/flow.lua; a
-- longer hold in force stays), whether or not a task was released. A key hold ('K' before holdMs) holds the rate key
-- of each task instead (kp:<key> field h) and sets the task aside in sched until the hold's end (state S, kw, like a
-- task set aside for its key); a task without a valid rate key, or on a queue without a key-rate-limit, holds the
-- whole queue as a hold does.
-- KEYS (fixed 4, per item 4):
--   1 ready  LIST    ready id hints
--   2 lease  ZSET    id -> lease deadline ms
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 stats  HASH    counters
--   per item: t:<id> HASH task, p:<id> STRING payload, e:<id> STRING last error, u:<digest> STRING (base..'u:' if none)
--   (a released task's hash gets rl = '1': recur_advance admits a released occurrence again)
--   derived from ARGV base (same hash tag), for the flow control of includes/flow.lua: meta HASH, kp:<key> HASH,
--   sched ZSET and tick LIST (a key hold's set-aside)
-- ARGV: 1 base, 2 fanoutBatch, 3 holdMs (0: none; 'K'<ms>: a key hold), 4 count, then per item 2: id, token
-- Reply: {now, then per item a code: 'O' released | 'C' cancel was requested, task deleted |
--   'L' lost (another token holds it, or unreadable; nothing changed) | 'G' no lease (given back already, or gone)}
-- A released task with a rate key gets kw: back, it is not put behind its key's line (includes/flow.lua).
-- keys: fixed=4 per-item=4
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"

local ready, lease, wake, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

local keyHold = string.sub(ARGV[3] or '', 1, 1) == 'K'
local base, fanoutBatch, holdMs, items =
  ARGV[1], int(ARGV[2]), int(keyHold and string.sub(ARGV[3], 2) or ARGV[3]), int(ARGV[4])
if not (base and fanoutBatch and fanoutBatch >= 1 and holdMs and holdMs >= 0 and items and items >= 0
    and #KEYS == 4 + 4 * items and #ARGV == 4 + 2 * items) then
  return redis.error_reply('ERR release: KEYS/ARGV do not match the item count')
end
--- @include "ids"
--- @include "fanout"

-- Before the tasks go back: the wake tokens of fanout then find the queue held.
if holdMs > 0 and not keyHold then holdQueue(now + holdMs) end
local limits = keyHold and holdMs > 0 and flowLimits()
local keysLimited = limits and limits.keyCount > 0
local asideHead

local reply, released, cancelled, stale = {now}, 0, 0, 0
-- Last item first: each goes to the head of its list, so the items end there in the order given (the order they were
-- claimed in).
for i = items - 1, 0, -1 do
  local tk, pk, ek, uk = KEYS[5 + 4 * i], KEYS[6 + 4 * i], KEYS[7 + 4 * i], KEYS[8 + 4 * i]
  local id, token = ARGV[5 + 2 * i], ARGV[6 + 2 * i]
  local r = pread('HMGET', tk, 'k', 'v', 'cr', 'rk', 'pr')
  local code = 'L'
  if not r.err and not r[1] then
    code = 'G' -- nothing holds it: a release sent again after its reply was lost, or a task that is gone
  elseif r.err or r[1] ~= token then
    code = 'L' -- another worker owns it now, or it is gone: leave it alone
    -- Leased to another worker while this one still ran it: it ran twice, as a stale ack says.
    if not r.err and r[1] then stale = stale + 1 end
  elseif r[3] == '1' then
    -- Cancelled while it ran: releasing it would run it again.
    redis.call('ZREM', lease, id)
    if pread('GET', uk) == id then redis.call('DEL', uk) end
    redis.call('DEL', tk, pk, ek)
    cancelled = cancelled + 1
    code = 'C'
  elseif int(r[2]) then
    local v = math.max(int(r[2]) - 1, 0)
    local rk = keysLimited and r[4] and validId(r[4]) and r[4]
    local at
    -- The undeclared keys this task's writes touch are read (or written) first: a moved slot raises before it changed.
    if rk then
      redis.call('ZCARD', base .. 'sched')
      redis.call('LLEN', base .. 'tick')
      at = holdKey(rk, now + holdMs)
    else
      touchReady(priorityOf(r[5]))
      if keyHold and holdMs > 0 then holdQueue(now + holdMs) end
    end
    redis.call('ZREM', lease, id)
    redis.call('HDEL', tk, 'k')
    -- rl: given back; a recurring occurrence admitted before it was released is admitted again (recur_advance).
    if rk then
      if asideHead == nil then
        local head = redis.call('ZRANGE', base .. 'sched', 0, 0, 'WITHSCORES')
        asideHead = head[2] and tonumber(head[2]) or false
      end
      redis.call('HSET', tk, 'v', v, 's', 'S', 'rl', 1, 'kw', at)
      redis.call('ZADD', base .. 'sched', at, id)
      if (not asideHead or at < asideHead) and redis.call('LLEN', base .. 'tick') == 0 then
        redis.call('LPUSH', base .. 'tick', 1)
      end
      redis.call('HINCRBY', stats, 'aside', 1)
    else
      redis.call('HSET', tk, 'v', v, 's', 'R', 'rl', 1)
      if r[4] then redis.call('HSET', tk, 'kw', now) end
      pushReady(id, priorityOf(r[5]), true) -- head: it was already waiting its turn
    end
    released = released + 1
    code = 'O'
  end
  reply[2 + i] = code
end

if cancelled > 0 then redis.call('HINCRBY', stats, 'canceled', cancelled) end
if stale > 0 then redis.call('HINCRBY', stats, 'stale', stale) end
if released > 0 then fanout() end
freedSlots(cancelled) -- a cancelled task ends its lease too
return reply
