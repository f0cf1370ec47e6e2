-- ack: complete a batch of leased tasks; each one must present its current lease token.
-- KEYS (fixed 2, per item 4):
--   1 lease  ZSET    id -> lease deadline ms
--   2 stats  HASH    counters
--   per item: t:<id> HASH task, p:<id> STRING payload, e:<id> STRING last error, u:<digest> STRING (base..'u:' if none)
--   derived from ARGV base (same hash tag), not declared because only corrupt data touches it: dead ZSET; and,
--   under a global concurrency limit (includes/flow.lua), meta HASH, ready LIST and wake LIST
-- ARGV: 1 base, 2 count, then per item 3: id, token, result (the handler's return value as JSON, or '')
--   The task's outcome is recorded when it asked for one (includes/outcome.lua).
-- Reply: {now, then per item a code: 'O' done | 'S' stale (token mismatch) | 'G' gone (task no longer exists,
--   e.g. a replayed ack) | 'K' corrupt (task key is not a hash; dead-lettered)}
-- keys: fixed=2 per-item=4
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "reasons"

local lease, stats = KEYS[1], KEYS[2]
local base, items = ARGV[1], tonumber(ARGV[2])
if not (base and items and items >= 0 and items == math.floor(items) and #KEYS == 2 + 4 * items
    and #ARGV == 2 + 3 * items) then
  return redis.error_reply('ERR ack: KEYS/ARGV do not match the item count')
end
local dead = base .. 'dead'

--- @include "outcome"
--- @include "flow"

local reply, done, stale, corrupted = {now}, 0, 0, 0
for i = 0, items - 1 do
  local tk, pk, ek, uk = KEYS[3 + 4 * i], KEYS[4 + 4 * i], KEYS[5 + 4 * i], KEYS[6 + 4 * i]
  local id, token, result = ARGV[3 + 3 * i], ARGV[4 + 3 * i], ARGV[5 + 3 * i]
  local k = pread('HGET', tk, 'k')
  local code
  if type(k) == 'table' then
    redis.call('ZREM', lease, id)
    redis.call('ZADD', dead, now, id)
    redis.call('SET', ek, CORRUPT .. '\n\ntask key is not a hash')
    corrupted = corrupted + 1
    code = 'K'
  elseif k and k == token then
    recordOutcome(id, tk, 'S', 1, '', '', '', result)
    redis.call('ZREM', lease, id)
    if pread('GET', uk) == id then redis.call('DEL', uk) end
    redis.call('DEL', tk, pk, ek)
    done = done + 1
    code = 'O'
  elseif not k and redis.call('EXISTS', tk) == 0 then
    -- Already completed (a replayed ack) or lost: not a sign of duplicate execution, so not counted as stale.
    redis.call('ZREM', lease, id)
    code = 'G'
  else
    stale = stale + 1
    code = 'S'
  end
  reply[#reply + 1] = code
end

if done > 0 then redis.call('HINCRBY', stats, 'done', done) end
if stale > 0 then redis.call('HINCRBY', stats, 'stale', stale) end
if corrupted > 0 then redis.call('HINCRBY', stats, 'corrupt', corrupted) end
freedSlots(#reply - 1 - stale)
return reply
