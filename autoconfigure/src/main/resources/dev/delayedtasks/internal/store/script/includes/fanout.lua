-- fanout: one wake token per fanoutBatch ready tasks (at most 64) wakes just enough idle dispatchers, no more than
-- a global concurrency limit has free slots (includes/flow.lua: a lease that ends wakes one then), and one while a
-- hold lasts (the dispatcher it wakes waits for the hold's end and claims then, waking others as it finds more).
-- uses: base, now, wake, fanoutBatch
--- @include "flow"
--- @include "priorities"
local function fanout()
  local backlog = readyCount()
  if backlog == 0 then return end
  local want = math.min(math.ceil(backlog / fanoutBatch), 64)
  local limits = flowLimits()
  if limits and limits.cap > 0 then want = math.min(want, limits.cap - redis.call('ZCARD', base .. 'lease')) end
  if limits and limits.hold > 0 then want = math.min(want, 1) end
  want = want - redis.call('LLEN', wake)
  for _ = 1, want do redis.call('RPUSH', wake, 1) end
end
