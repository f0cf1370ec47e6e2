-- purge: bounded deletion of dead letters: all of them (oldest first), those over the age and count limits, or one.
-- KEYS (fixed 2, per item 0):
--   1 dead   ZSET    id -> dead-letter time ms
--   2 stats  HASH    counters
--   derived from ARGV base (same hash tag; the ids are found inside the script): t:<id> HASH, p:<id> STRING,
--   e:<id> STRING, u:<digest> STRING
-- ARGV: 1 base, 2 mode ('all' | 'trim' | 'one'), 3 limit (max entries removed per call), 4 maxAgeMs (<= 0: no age
--   limit), 5 maxCount (<= 0: no count limit), 6 id (mode 'one': the dead letter to delete, if it is one)
-- Reply: {now, deleted, remainingDead}
-- keys: fixed=2 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"

local dead, stats = KEYS[1], KEYS[2]

local base, mode, limit, maxAge, maxCount = ARGV[1], ARGV[2], int(ARGV[3]), int(ARGV[4]), int(ARGV[5])
local one = ARGV[6]
if not (#KEYS == 2 and base and (mode == 'all' or mode == 'trim' or (mode == 'one' and one and one ~= ''))
    and limit and limit >= 0 and maxAge and maxCount) then
  return redis.error_reply('ERR purge: bad KEYS/ARGV')
end

--- @include "trimDead"

local deleted = 0
if mode == 'trim' then
  deleted = trimDead(limit, maxAge, maxCount)
elseif mode == 'one' then
  if redis.call('ZSCORE', dead, one) then
    dropDead(one)
    deleted = 1
    redis.call('HINCRBY', stats, 'purged', 1)
  end
elseif limit > 0 then
  for _, id in ipairs(redis.call('ZRANGE', dead, 0, limit - 1)) do
    dropDead(id)
    deleted = deleted + 1
  end
  if deleted > 0 then redis.call('HINCRBY', stats, 'purged', deleted) end
end

return {now, deleted, redis.call('ZCARD', dead)}
