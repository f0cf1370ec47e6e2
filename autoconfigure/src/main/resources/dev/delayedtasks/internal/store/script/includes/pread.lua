-- pread: redis.pcall for reads that may meet bad data, except that a key whose Cluster slot is moving to another
-- master ("non local key") is not bad data: raise, so the caller retries once the slot has moved.
local function pread(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err and string.find(r.err, 'non local key', 1, true) then error(r.err) end
  return r
end
