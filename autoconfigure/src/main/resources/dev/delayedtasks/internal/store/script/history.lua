-- history: record a partition's cumulative counters of created, succeeded, retried and dead-lettered tasks, and of
--   runs started per lateness bucket, once per minute and once per hour of Redis time, for charts that work on any
--   instance, after restarts. The calling instance first adds the lateness counts it took since its last call
--   (buckets of LatenessBuckets: up to 1, 2, 5, ... 60000 ms, then above). A period already
--   recorded (by any instance) is left alone; a queue whose counters have not moved since its last sample adds
--   nothing (the next sample's difference covers the gap, the first one after it being written at the period before,
--   so that a burst after a quiet spell lands in the period it happened in). Samples older than kept periods go.
-- KEYS (fixed 3, per item 0):
--   1 stats    HASH  counters (enq, done, retry, dead; l1 .. l16: runs started per lateness bucket)
--   2 hm       ZSET  minute index -> '<minute>:<enq>:<done>:<retry>:<dead>:<l1>,...,<l16>'
--   3 hh       ZSET  hour index -> '<hour>:<enq>:<done>:<retry>:<dead>:<l1>,...,<l16>'
-- ARGV: 1 minutes kept, 2 hours kept, 3 lateness counts to add, '<c1>,...,<c16>' or '' for none
-- Reply: {now, minute recorded (0/1), hour recorded (0/1)}
-- keys: fixed=3 per-item=0
redis.replicate_commands()
--- @include "now"
--- @include "int"

local stats, minutes, hours = KEYS[1], KEYS[2], KEYS[3]
local minutesKept, hoursKept = int(ARGV[1]), int(ARGV[2])
if not (#KEYS == 3 and #ARGV == 3 and minutesKept and minutesKept >= 1 and hoursKept and hoursKept >= 1) then
  return redis.error_reply('ERR history: bad KEYS/ARGV')
end

local BUCKETS = 16
local fields = {}
for b = 1, BUCKETS do fields[b] = 'l' .. b end
if ARGV[3] ~= '' then
  local b = 0
  for text in string.gmatch(ARGV[3], '[^,]+') do
    b = b + 1
    local add = int(text)
    if not add or add < 0 or b > BUCKETS then return redis.error_reply('ERR history: bad lateness counts') end
    if add > 0 then redis.call('HINCRBY', stats, fields[b], add) end
  end
end

local c = redis.call('HMGET', stats, 'enq', 'done', 'retry', 'dead', unpack(fields))
local late = {}
for b = 1, BUCKETS do late[b] = int(c[4 + b]) or 0 end
local counts = (int(c[1]) or 0) .. ':' .. (int(c[2]) or 0) .. ':' .. (int(c[3]) or 0) .. ':' .. (int(c[4]) or 0)
  .. ':' .. table.concat(late, ',')

local function record(key, periodMs, kept)
  local period = math.floor(now / periodMs)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local lastPeriod = last[2] and tonumber(last[2])
  if lastPeriod and lastPeriod >= period then return 0 end
  local lastCounts = last[1] and string.match(last[1], '^%-?%d+:(.*)$')
  if lastCounts == counts then return 0 end
  if lastCounts and lastPeriod < period - 1 then
    redis.call('ZADD', key, period - 1, (period - 1) .. ':' .. lastCounts)
  end
  redis.call('ZADD', key, period, period .. ':' .. counts)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', period - kept)
  -- Gone on its own once the queue has been quiet for the whole window.
  redis.call('PEXPIRE', key, (kept + 1) * periodMs)
  return 1
end

return {now, record(minutes, 60000, minutesKept), record(hours, 3600000, hoursKept)}
