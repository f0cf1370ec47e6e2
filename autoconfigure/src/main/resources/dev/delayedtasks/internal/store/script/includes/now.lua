-- now: Redis server time in epoch ms, read once per script, so app-server clocks never decide when a task is due.
-- Plus the partition's test clock offset, in ms: field 'o' of its meta hash, which only delayed-tasks-test writes
-- (DelayedTasksTester#advanceTime) and which stops an application from starting (LayoutVersion). The partition is
-- found from KEYS[1], a key of the partition in every script (its base ends at the hash tag's '}:'), so every
-- script that includes this file honours the offset, whatever its ARGV. In production this costs one HGET of the
-- meta hash (which holds the layout version anyway; about a microsecond): no key that only tests write is declared.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
do
  local tag = KEYS[1] and string.find(KEYS[1], '}:', 1, true)
  if tag then
    -- redis.call, as for the meta hash's other fields: a meta that is not a hash stops every script alike.
    local offset = redis.call('HGET', string.sub(KEYS[1], 1, tag + 1) .. 'meta', 'o')
    if offset then now = now + (tonumber(offset) or 0) end
  end
end
