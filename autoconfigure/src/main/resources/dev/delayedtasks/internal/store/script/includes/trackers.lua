-- trackers: the channels of the producers that wait for a task to end (field tn, space-separated): each of them hears
-- it end (includes/outcome.lua). A channel named again moves to the end; past 16 the oldest is dropped (its producer
-- still finds the outcome record when it next reads it).
local function withTracker(list, channel)
  if not channel or channel == '' then return list or '' end
  local kept = {}
  for c in string.gmatch(list or '', '%S+') do
    if c ~= channel then kept[#kept + 1] = c end
  end
  kept[#kept + 1] = channel
  while #kept > 16 do table.remove(kept, 1) end
  return table.concat(kept, ' ')
end
