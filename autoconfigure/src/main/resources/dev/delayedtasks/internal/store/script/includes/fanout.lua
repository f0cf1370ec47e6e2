-- fanout: one wake token per fanoutBatch ready tasks (at most 64) wakes just enough idle dispatchers, and no more than
-- a global concurrency limit has free slots (includes/flow.lua: a lease that ends wakes one then).
-- uses: base, now, ready, wake, fanoutBatch
--- @include "flow"
local function fanout()
  local backlog = redis.call('LLEN', ready)
  if backlog == 0 then return end
  local want = math.min(math.ceil(backlog / fanoutBatch), 64)
  local limits = flowLimits()
  if limits and limits.cap > 0 then want = math.min(want, limits.cap - redis.call('ZCARD', base .. 'lease')) end
  want = want - redis.call('LLEN', wake)
  for _ = 1, want do redis.call('RPUSH', wake, 1) end
end
