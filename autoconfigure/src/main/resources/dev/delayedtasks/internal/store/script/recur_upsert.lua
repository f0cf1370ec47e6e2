-- recur_upsert: create or update a recurring schedule's definition; a changed definition supersedes the occurrences
-- created for the old one and restarts the tick sequence from Redis now (a changed cron applies from its next tick).
-- KEYS (fixed 3, per item 0):
--   1 r:<sid>   HASH  the schedule: definition, next uncreated tick n, window w of created ticks not yet started
--   2 recurring ZSET  schedule id -> creation ms: this partition's schedules
--   3 meta      HASH  v = layout version
-- ARGV: 1 sid, 2 layout version, 3 digest of the definition, 4 kind ('C' cron | 'F' fixed rate), 5 expression (cron
--   text, or the rate in ms), 6 zone, 7 envelope, 8 misfire ('S' skip | 'O' run once | 'A' run each, up to bound),
--   9 misfire bound, 10 misfire threshold ms, 11 overlap ('A' allow | 'S' skip), 12 maxAttempts, 13 origin
-- Reply: {now, code, generation}; code: 'C' created | 'U' updated (definition changed) | 'S' same definition
--   or {now, 'LAYOUT', storedVersion} when the stored layout differs (nothing is written)
-- keys: fixed=3 per-item=0
redis.replicate_commands()
--- @include "now"
--- @include "int"

if not (#KEYS == 3 and #ARGV == 13) then
  return redis.error_reply('ERR recur_upsert: expected 3 KEYS and 13 ARGV')
end
local hk, index, meta = KEYS[1], KEYS[2], KEYS[3]
local sid, layout, digest = ARGV[1], ARGV[2], ARGV[3]
if not (int(ARGV[9]) and int(ARGV[10]) and int(ARGV[12])) then
  return redis.error_reply('ERR recur_upsert: bad ARGV')
end

local stored = redis.call('HGET', meta, 'v')
if stored and stored ~= layout then return {now, 'LAYOUT', stored} end
redis.call('HSETNX', meta, 'v', layout)

local cur = redis.call('HMGET', hk, 'h', 'g')
local definition = {'h', digest, 'k', ARGV[4], 'x', ARGV[5], 'z', ARGV[6], 'e', ARGV[7], 'mp', ARGV[8],
  'mb', ARGV[9], 'mt', ARGV[10], 'op', ARGV[11], 'ma', ARGV[12], 'o', ARGV[13]}
if cur[1] == digest then
  redis.call('HSET', hk, 'o', ARGV[13])
  return {now, 'S', int(cur[2]) or 0}
end
local generation = (int(cur[2]) or 0) + 1
-- 'R': the tick sequence restarts after Redis now; future occurrences left from the old definition leave the
-- window w, so the worker skips them when they come due (an identical tick is re-adopted, not duplicated). Those
-- already due stay: their tick came before the change, and they run (or count as missed) as before.
local due = {}
for t in string.gmatch(redis.call('HGET', hk, 'w') or '', '[^,]+') do
  if int(t) and int(t) <= now then due[#due + 1] = t end
end
redis.call('HSET', hk, 'g', generation, 'n', 'R', 'w', table.concat(due, ','), unpack(definition))
if not cur[2] then redis.call('HSET', hk, 'ps', '0', 'cc', 0, 'cm', 0, 'co', 0, 'c', now) end
redis.call('ZADD', index, 'NX', now, sid)
return {now, cur[2] and 'U' or 'C', generation}
