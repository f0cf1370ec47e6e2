-- recur_trigger: create one occurrence of a recurring schedule now, outside its ticks ("trigger now"), in one step.
-- The occurrence is an ordinary ready task with the id <sid>:<now ms>, created as recur_advance creates a tick's (same
-- fields, same envelope, same max attempts) and entered in the schedule's window w, so that when a worker is about
-- to run it recur_advance admits it like a tick: the overlap policy applies, it becomes the last tick started and its
-- outcome is recorded. The tick sequence (n) does not move: the next tick comes at its time.
-- KEYS (fixed 5, per item 0):
--   1 ready   LIST    ready id hints
--   2 wake    LIST    wake tokens for idle dispatchers
--   3 stats   HASH    counters
--   4 meta    HASH    v = layout version
--   5 r:<sid> HASH    the schedule (see recur_upsert)
--   derived from ARGV base (same hash tag): t:<sid>:<now> HASH task, p:<sid>:<now> STRING payload envelope,
--   o:<sid>:<now> STRING an earlier incarnation's outcome (deleted)
-- ARGV: 1 base, 2 sid, 3 layout version, 4 fanoutBatch
-- Reply: {now, code ('O' created | 'E' an occurrence of this instant exists already | 'N' no such schedule |
--   'P' paused: nothing created), occurrence id or ''}
--   or {now, 'LAYOUT', storedVersion} when the stored layout differs (nothing is written)
-- keys: fixed=5 per-item=0
redis.replicate_commands()
--- @include "pread"
--- @include "now"
--- @include "int"

local ready, wake, stats, meta, hk = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local base, sid, layout, fanoutBatch = ARGV[1], ARGV[2], ARGV[3], int(ARGV[4])
if not (#KEYS == 5 and #ARGV == 4 and fanoutBatch and fanoutBatch >= 1) then
  return redis.error_reply('ERR recur_trigger: bad KEYS/ARGV')
end

--- @include "fanout"

local stored = redis.call('HGET', meta, 'v')
if stored and stored ~= layout then return {now, 'LAYOUT', stored} end

local d = pread('HMGET', hk, 'g', 'ps', 'w', 'e', 'ma')
if d.err or not d[1] then return {now, 'N', ''} end
-- A paused schedule's occurrences are skipped when they come due: one created now would never run.
if d[2] == '1' then return {now, 'P', ''} end

local id = sid .. ':' .. now
local tk = base .. 't:' .. id
local s = pread('HGET', tk, 's')
-- A tick of the same instant (or a trigger in the same millisecond) already made this occurrence; any other value
-- under the id (not a task hash) is left alone.
if type(s) == 'table' or (s and s ~= 'X') then return {now, 'E', id} end
redis.call('DEL', base .. 'o:' .. id)
if s then redis.call('DEL', tk) end -- a cancelled tombstone counts as absent
redis.call('HSET', tk, 's', 'R', 'a', 0, 'v', 0, 'm', int(d[5]) or 1, 'f', 0, 'd', now, 'c', now)
redis.call('SET', base .. 'p:' .. id, d[4] or '{"h":{},"b":null}')
redis.call('RPUSH', ready, id)
local w = d[3] or ''
redis.call('HSET', hk, 'w', (w == '') and tostring(now) or (w .. ',' .. now))
redis.call('HINCRBY', hk, 'cc', 1)
redis.call('HINCRBY', stats, 'enq', 1)
fanout()
return {now, 'O', id}
