-- fanout: one wake token per fanoutBatch ready tasks (at most 64) wakes just enough idle dispatchers.
-- uses: ready, wake, fanoutBatch
local function fanout()
  local backlog = redis.call('LLEN', ready)
  if backlog == 0 then return end
  local want = math.min(math.ceil(backlog / fanoutBatch), 64) - redis.call('LLEN', wake)
  for _ = 1, want do redis.call('RPUSH', wake, 1) end
end
