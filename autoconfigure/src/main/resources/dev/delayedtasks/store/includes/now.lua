-- now: Redis server time in epoch ms, read once per script, so app-server clocks never decide when a task is due.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
