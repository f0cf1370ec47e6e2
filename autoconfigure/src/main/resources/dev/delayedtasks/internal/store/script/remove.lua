-- remove: delete the leftover keys of an empty queue partition, so that its queue can leave the index of known
--   queues; refuse when it holds tasks or an instance holds its timer (a handler for it runs there). Deleting meta
--   deletes its layout version: the next enqueue finds none and tells its producer to add the queue to the index
--   again, which is what makes removal safe against a concurrent schedule (see RedisQueueControl#remove).
-- KEYS (fixed 10, per item 0):
--   1 sched    ZSET    id -> due ms
--   2 ready    LIST    ready id hints
--   3 lease    ZSET    id -> lease deadline ms
--   4 dead     ZSET    id -> dead-letter time ms
--   5 timer    STRING  timer owner id (PX)
--   6 meta     HASH    v = layout version, paused = '1' when paused
--   7 stats    HASH    counters
--   8 tick     LIST    <= 1 token: the earliest due time changed
--   9 wake     LIST    wake tokens for idle dispatchers
--   10 handover LIST   a resigning timer owner's token
--   derived from ARGV base (same hash tag; the ids are found inside the script): t:<id> HASH of the ready hints;
--   ready:<p> LISTs and levels ZSET, the ready hints of the other priorities (includes/priorities.lua); starts ZSET;
--   field gh of the tombstones (state X) of hints, whose hints go with the lists; hm and hh ZSETs, the counters'
--   history (history.lua), which goes with the counters
-- ARGV: 1 base, 2 hintScan (most ready hints checked per priority; a longer list counts as that many ready tasks)
-- Reply: {now, code, scheduled, ready, active, dead, timer owner or ''}; code: 'O' removed (the keys above deleted) |
--   'N' not empty (nothing written) | 'T' an instance holds the timer (nothing written)
-- keys: fixed=10 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"

local sched, ready, lease, dead, timer, meta, stats, tick, wake, handover =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local base, hintScan = ARGV[1], tonumber(ARGV[2])
if not (#KEYS == 10 and base and hintScan and hintScan >= 0) then
  return redis.error_reply('ERR remove: bad KEYS/ARGV')
end

--- @include "priorities"

local scheduled, active, deadCount = redis.call('ZCARD', sched), redis.call('ZCARD', lease), redis.call('ZCARD', dead)
-- Cancelled and rescheduled ready tasks leave hints behind: only hints of ready tasks count. Data that cannot be
-- read counts as a ready task, so that it is never deleted here.
-- Every priority's list, whatever levels says: nothing ready may be deleted here.
local readyKeys, readyCount, tombstones = {}, 0, {}
for p = MIN_PRIORITY, MAX_PRIORITY do
  local key = readyKey(p)
  readyKeys[#readyKeys + 1] = key
  local hints = redis.call('LLEN', key)
  local count = hints
  if hints > 0 and hints <= hintScan then
    count = 0
    for _, id in ipairs(redis.call('LRANGE', key, 0, hints - 1)) do
      local s = pread('HGET', base .. 't:' .. id, 's')
      if type(s) == 'table' or s == 'R' then count = count + 1 end
      if s == 'X' then tombstones[#tombstones + 1] = base .. 't:' .. id end
    end
  end
  readyCount = readyCount + count
end
local owner = redis.call('GET', timer)

if scheduled + readyCount + active + deadCount > 0 then
  return {now, 'N', scheduled, readyCount, active, deadCount, owner or ''}
end
if owner then return {now, 'T', 0, 0, 0, 0, owner} end
-- A cancelled task's tombstone counts the hints it left (gh) for a task created again with its id: they go now.
for _, tk in ipairs(tombstones) do redis.call('HDEL', tk, 'gh') end
redis.call('DEL', sched, lease, dead, meta, stats, tick, wake, handover, base .. 'starts', base .. 'levels',
  base .. 'hm', base .. 'hh', unpack(readyKeys))
return {now, 'O', 0, 0, 0, 0, ''}
