-- nowOnTestClock: the "now" include of the scripts delayed-tasks-test loads (ScriptClock.TEST): Redis server time in
-- epoch ms plus the partition's test clock offset, in ms: field 'o' of its meta hash, which only delayed-tasks-test
-- writes (DelayedTasksTester#advanceTime) and which stops an application from starting (LayoutVersion). The partition
-- is found from KEYS[1], a key of the partition in every script (its base ends at the hash tag's '}:'), so every
-- script honours the offset, whatever its ARGV. An application's scripts include "now" as it is and never read it.
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
