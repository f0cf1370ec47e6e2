-- track: a producer asks to be told when a task ends: the live task keeps its outcome for at least keepMs and adds
-- the producer's channel to its trackers (fields or, tn; see includes/outcome.lua and includes/trackers.lua), or the
-- record of how it ended is there already. A live task's record, if any, is an earlier incarnation's: not its own.
-- KEYS (fixed 3, per item 0):
--   1 meta   HASH    the partition's layout version (and test clock)
--   2 t:<id> HASH    task
--   3 o:<id> HASH    outcome record
-- ARGV: 1 keepMs, 2 channel
-- Reply: {now, code}; code: 'L' live, the channel will hear when it ends | 'O' ended, its outcome record exists |
--   'N' neither: no such task, or one that ended without a record
-- keys: fixed=3 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"
--- @include "trackers"

local tk, ok = KEYS[2], KEYS[3]
local keep, channel = int(ARGV[1]), ARGV[2]
if not (#KEYS == 3 and keep and keep > 0 and channel and channel ~= '') then
  return redis.error_reply('ERR track: bad KEYS/ARGV')
end

local r = pread('HMGET', tk, 's', 'or', 'tn')
if type(r) == 'table' and not r.err and (r[1] == 'S' or r[1] == 'R' or r[1] == 'A') then
  redis.call('HSET', tk, 'or', math.max(int(r[2]) or 0, keep), 'tn', withTracker(r[3], channel))
  return {now, 'L'}
end
if redis.call('EXISTS', ok) == 1 then return {now, 'O'} end
return {now, 'N'}
