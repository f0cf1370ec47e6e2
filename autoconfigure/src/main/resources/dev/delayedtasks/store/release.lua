-- release: graceful shutdown: hand leased tasks back to the head of ready without counting the delivery.
-- KEYS (fixed 4, per item 4):
--   1 ready  LIST    ready id hints
--   2 lease  ZSET    id -> lease deadline ms
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 stats  HASH    counters
--   per item: t:<id> HASH task, p:<id> STRING payload, e:<id> STRING last error, u:<digest> STRING (base..'u:' if none)
-- ARGV: 1 fanoutBatch, 2 count, then per item 2: id, token
-- Reply: {now, then per item a code: 'O' released | 'C' cancel was requested, task deleted |
--   'L' lost (missing, token mismatch or unreadable; nothing changed)}
-- keys: fixed=4 per-item=4
redis.replicate_commands()
-- redis.pcall for reads that may meet bad data, except that a key whose Cluster slot is moving to another
-- master ("non local key") is not bad data: raise, so the caller retries once the slot has moved.
local function pread(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err and string.find(r.err, 'non local key', 1, true) then error(r.err) end
  return r
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local ready, lease, wake, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

-- Integer or nil: fields and ARGV arrive as strings; fractions, inf and nan must not reach a write.
local function int(x)
  local num = tonumber(x)
  if num and num == math.floor(num) and math.abs(num) < 2 ^ 53 then return num end
end

local fanoutBatch, items = int(ARGV[1]), int(ARGV[2])
if not (fanoutBatch and fanoutBatch >= 1 and items and items >= 0 and #KEYS == 4 + 4 * items
    and #ARGV == 2 + 2 * items) then
  return redis.error_reply('ERR release: KEYS/ARGV do not match the item count')
end

local reply, released, canceled = {now}, 0, 0
for i = 0, items - 1 do
  local tk, pk, ek, uk = KEYS[5 + 4 * i], KEYS[6 + 4 * i], KEYS[7 + 4 * i], KEYS[8 + 4 * i]
  local id, token = ARGV[3 + 2 * i], ARGV[4 + 2 * i]
  local r = pread('HMGET', tk, 'k', 'v', 'cr')
  local code = 'L'
  if r.err or r[1] ~= token then
    code = 'L' -- another worker owns it now, or it is gone: leave it alone
  elseif r[3] == '1' then
    -- Cancelled while it ran: releasing it would run it again.
    redis.call('ZREM', lease, id)
    if pread('GET', uk) == id then redis.call('DEL', uk) end
    redis.call('DEL', tk, pk, ek)
    canceled = canceled + 1
    code = 'C'
  elseif int(r[2]) then
    redis.call('ZREM', lease, id)
    redis.call('HDEL', tk, 'k')
    redis.call('HSET', tk, 'v', math.max(int(r[2]) - 1, 0), 's', 'R')
    redis.call('LPUSH', ready, id) -- head: it was already waiting its turn
    released = released + 1
    code = 'O'
  end
  reply[#reply + 1] = code
end

if canceled > 0 then redis.call('HINCRBY', stats, 'canceled', canceled) end
if released > 0 then
  local want = math.min(math.ceil(redis.call('LLEN', ready) / fanoutBatch), 64) - redis.call('LLEN', wake)
  for _ = 1, want do redis.call('RPUSH', wake, 1) end
end
return reply
