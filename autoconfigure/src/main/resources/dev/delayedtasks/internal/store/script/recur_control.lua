-- recur_control: pause, resume or remove a recurring schedule, or record the outcome of its last occurrence.
-- KEYS (fixed 2, per item 0):
--   1 r:<sid>   HASH  the schedule
--   2 recurring ZSET  schedule id -> creation ms: this partition's schedules
-- ARGV: 1 sid, 2 op ('P' pause | 'U' resume | 'D' remove | 'O' outcome), 3 tick ms (op 'O'), 4 outcome text (op 'O')
-- Reply: {now, code}; code: 'O' done | 'N' no such schedule | 'S' outcome not recorded (a later tick has started)
-- keys: fixed=2 per-item=0
redis.replicate_commands()
--- @include "now"

if not (#KEYS == 2 and #ARGV == 4) then
  return redis.error_reply('ERR recur_control: expected 2 KEYS and 4 ARGV')
end
local hk, index = KEYS[1], KEYS[2]
local sid, op = ARGV[1], ARGV[2]

-- Never HSET a missing schedule: that would resurrect a removed one as a hash without a definition.
if redis.call('EXISTS', hk) == 0 then
  if op == 'D' then redis.call('ZREM', index, sid) end
  return {now, 'N'}
end
if op == 'P' then
  redis.call('HSET', hk, 'ps', '1')
elseif op == 'U' then
  -- Ticks while paused are not missed ticks: the sequence restarts after Redis now.
  if redis.call('HGET', hk, 'ps') == '1' then redis.call('HSET', hk, 'ps', '0', 'n', 'R', 'w', '') end
elseif op == 'D' then
  redis.call('DEL', hk)
  redis.call('ZREM', index, sid)
elseif op == 'O' then
  if redis.call('HGET', hk, 'lr') ~= ARGV[3] then return {now, 'S'} end
  redis.call('HSET', hk, 'lo', ARGV[4], 'lt', now)
else
  return redis.error_reply('ERR recur_control: unknown op ' .. tostring(op))
end
return {now, 'O'}
