-- trimDead: bounded trimming of the dead set, oldest first: entries older than maxAgeMs, then the oldest beyond
-- maxCount, at most limit entries in all (a limit or maxAge/maxCount <= 0: no trimming by it). A dead entry whose
-- id now names a live task is stale: the entry goes, the task stays. Removed entries count as 'purged'.
-- uses: base, dead, stats, now
--- @include "pread"
--- @include "releaseUnique"
--- @include "deleteTask"
local function dropDead(id)
  local r = pread('HMGET', base .. 't:' .. id, 's', 'u')
  local s = not r.err and r[1]
  if s ~= 'S' and s ~= 'R' and s ~= 'A' then
    if not r.err then releaseUnique(id, r[2]) end
    deleteTask(id)
  end
  redis.call('ZREM', dead, id)
end

local function trimDead(limit, maxAge, maxCount)
  if limit <= 0 then return 0 end
  local removed = 0
  if maxAge > 0 then
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', dead, '-inf', now - maxAge, 'LIMIT', 0, limit)) do
      dropDead(id)
      removed = removed + 1
    end
  end
  local excess = maxCount > 0 and redis.call('ZCARD', dead) - maxCount or 0
  local room = limit - removed
  if excess > 0 and room > 0 then
    for _, id in ipairs(redis.call('ZRANGE', dead, 0, math.min(excess, room) - 1)) do
      dropDead(id)
      removed = removed + 1
    end
  end
  if removed > 0 then redis.call('HINCRBY', stats, 'purged', removed) end
  return removed
end
