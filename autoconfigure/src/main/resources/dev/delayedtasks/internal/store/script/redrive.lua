-- redrive: move dead letters back to ready with fresh attempt and delivery counts (a, v, x). An expiry (xa) that has
--   passed is dropped, so a task that expired runs when redriven; one still ahead stays and holds as before.
-- KEYS (fixed 4, per item 0):
--   1 dead   ZSET    id -> dead-letter time ms
--   2 ready  LIST    ready id hints
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 stats  HASH    counters
--   derived from ARGV base (same hash tag; the ids are found inside the script): t:<id> HASH, p:<id> STRING,
--   e:<id> STRING, o:<id> HASH (the outcome record of the dead letter: a redriven task is a new incarnation)
-- ARGV: 1 base, 2 fanoutBatch, 3 limit, 4 offset, 5 id ('' = up to limit dead entries from rank offset, oldest first),
--   6 new payload envelope for the single id ('' = keep it), 7 the dead-letter time (ms) of the dead letter whose
--   payload the caller edited: the payload is replaced only while the id is still that dead letter
-- Reply: {now, moved, skipped, remainingDead}; skipped entries (task hash missing, unreadable or not in state D,
--   or payload missing) stay dead. For a single id: moved = 1, or 0 with skipped = 1, or -1 when it is not in dead,
--   or -2 when a new payload was given and the id is no longer the dead letter of that time (nothing changed).
-- keys: fixed=4 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"

local dead, ready, wake, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

local base, fanoutBatch, limit, offset, one = ARGV[1], int(ARGV[2]), int(ARGV[3]), int(ARGV[4]), ARGV[5]
local newPayload, deadAt = ARGV[6] or '', int(ARGV[7])
if not (#KEYS == 4 and base and fanoutBatch and fanoutBatch >= 1 and limit and limit >= 0 and offset
    and offset >= 0 and one and (newPayload == '' or (one ~= '' and deadAt))) then
  return redis.error_reply('ERR redrive: bad KEYS/ARGV')
end

--- @include "fanout"

local ids = {}
if one ~= '' then
  local score = redis.call('ZSCORE', dead, one)
  if not score then return {now, -1, 0, redis.call('ZCARD', dead)} end
  -- Redriven and dead again since the editor read it: its payload may have been edited too.
  if newPayload ~= '' and tonumber(score) ~= deadAt then return {now, -2, 0, redis.call('ZCARD', dead)} end
  ids = {one}
elseif limit > 0 then
  ids = redis.call('ZRANGE', dead, offset, offset + limit - 1)
end

local moved, skipped = 0, 0
for _, id in ipairs(ids) do
  local tk = base .. 't:' .. id
  local r = pread('HMGET', tk, 's', 'xa', 'pr')
  local s = (type(r) == 'table' and not r.err) and r[1] or nil
  -- Without a readable task and its payload there is nothing to run: leave the entry for inspection or purge.
  if s ~= 'D' or redis.call('TYPE', base .. 'p:' .. id).ok ~= 'string' then
    skipped = skipped + 1
  else
    -- undeclared: first, so a moved slot raises before any change
    touchReady(priorityOf(r[3]))
    if newPayload ~= '' then redis.call('SET', base .. 'p:' .. id, newPayload) end
    redis.call('DEL', base .. 'e:' .. id, base .. 'o:' .. id)
    redis.call('ZREM', dead, id)
    -- rl: a recurring occurrence admitted before runs again (recur_advance), like one a graceful stop gave back.
    redis.call('HSET', tk, 's', 'R', 'a', 0, 'v', 0, 'd', now, 'rl', 1)
    redis.call('HDEL', tk, 'k', 'cr', 'x')
    -- Redriven on purpose: an expiry that has passed no longer holds (claim would end the task again at once); one
    -- still ahead does, whatever the task died of. A value that is not a number is ignored by claim: drop it too.
    local xa = int(r[2])
    if r[2] and not (xa and xa > now) then redis.call('HDEL', tk, 'xa') end
    pushReady(id, priorityOf(r[3]))
    moved = moved + 1
  end
end

if moved > 0 then
  redis.call('HINCRBY', stats, 'redriven', moved)
  fanout()
end
return {now, moved, skipped, redis.call('ZCARD', dead)}
