-- extend: batch heartbeat: push the lease deadline of tasks still held with the presented token.
-- KEYS (fixed 1, per item 1):
--   1 lease  ZSET    id -> lease deadline ms
--   per item: t:<id> HASH task
-- ARGV: 1 leaseMs, 2 count, then per item 2: id, token
-- Reply: {now, then per item a code: 'O' extended | 'C' extended, but cancel was requested (stop the handler) |
--   'L' lost (missing, token mismatch or unreadable)}
-- keys: fixed=1 per-item=1
redis.replicate_commands()
--- @include "pread"
--- @include "now"

local lease = KEYS[1]
local leaseMs, items = tonumber(ARGV[1]), tonumber(ARGV[2])
if not (leaseMs and leaseMs > 0 and items and items >= 0 and items == math.floor(items)
    and #KEYS == 1 + items and #ARGV == 2 + 2 * items) then
  return redis.error_reply('ERR extend: KEYS/ARGV do not match the item count')
end

local reply = {now}
for i = 1, items do
  local id, token = ARGV[1 + 2 * i], ARGV[2 + 2 * i]
  local r = pread('HMGET', KEYS[1 + i], 'k', 'cr')
  local code = 'L'
  if not r.err and r[1] and r[1] == token then
    -- GT: a delayed heartbeat must never shorten a lease a newer one already pushed further.
    redis.call('ZADD', lease, 'XX', 'GT', now + leaseMs, id)
    code = r[2] == '1' and 'C' or 'O'
  end
  reply[#reply + 1] = code
end
return reply
