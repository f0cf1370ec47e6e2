-- queueMeta: the fields of a partition's meta hash that claims read, in one call: fl and fh (includes/flow.lua) and pr
-- (includes/priorities.lua). Read once per script call: no script writes fl or fh after reading them, and
-- priorities.lua keeps pr up to date here when it writes it.
-- uses: base
local metaRead
local function queueMeta()
  if not metaRead then metaRead = redis.call('HMGET', base .. 'meta', 'fl', 'fh', 'pr') end
  return metaRead
end

-- After a write of these fields (a hold), the next read must see it.
local function forgetQueueMeta()
  metaRead = nil
end
