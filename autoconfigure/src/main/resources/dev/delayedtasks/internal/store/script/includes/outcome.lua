-- outcome: record how a task ended, in the script that ends it, when its producer asked: the task hash's field 'or'
-- is how long to keep the record (ms), 'tn' the channels of the producers that track it (includes/trackers.lua).
-- The record is the hash
-- o:<id> (k kind: 'S' succeeded | 'D' dead-lettered | 'C' cancelled | 'X' expired, a runs: the failures recorded in
-- the task's field a plus thisRun (1 when the ending follows a run, 0 when it ends unrun), t end ms, rs reason,
-- et exception type, em message, r result JSON), derived from the id; each channel hears the record's key. Call it
-- before the branch's other writes: o:<id> is not declared, and during a Cluster slot migration a write to a key
-- that moved raises where nothing has changed yet.
-- uses: base, now
--- @include "pread"
--- @include "int"
local function recordOutcome(id, tk, kind, thisRun, reason, exType, message, result)
  local r = pread('HMGET', tk, 'or', 'tn', 'a')
  if type(r) ~= 'table' or r.err then return end
  local keep = int(r[1])
  if not keep or keep <= 0 then return end
  local runs = (tonumber(r[3]) or 0) + thisRun
  local ok = base .. 'o:' .. id
  redis.call('DEL', ok)
  redis.call('HSET', ok, 'k', kind, 'a', runs, 't', now, 'rs', reason or '', 'et', exType or '',
    'em', message or '', 'r', result or '')
  redis.call('PEXPIRE', ok, keep)
  -- pcall: a channel the application's ACL does not grant (corrupt data) must not undo the task's end.
  for channel in string.gmatch(r[2] or '', '%S+') do redis.pcall('PUBLISH', channel, ok) end
end
