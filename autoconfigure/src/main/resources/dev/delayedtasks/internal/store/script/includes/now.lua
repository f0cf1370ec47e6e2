-- now: Redis server time in epoch ms, read once per script, so app-server clocks never decide when a task is due.
-- An application's scripts read nothing else: a test clock offset found in Redis (field 'o' of a partition's meta
-- hash) moves only the scripts that delayed-tasks-test loads, which include nowOnTestClock instead (ScriptClock).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
