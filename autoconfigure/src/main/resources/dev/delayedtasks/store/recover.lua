-- recover: give back, without penalty, the tasks leased by claims whose reply never reached the dispatcher (the call
--   timed out or the connection broke while Redis still ran it), so they run again at once instead of after their
--   lease expires. Every claim carries its own nonce; a lease token is '<nonce>:<fence>'.
-- KEYS (fixed 4, per item 0):
--   1 ready  LIST    ready id hints
--   2 lease  ZSET    id -> lease deadline ms
--   3 wake   LIST    wake tokens for idle dispatchers
--   4 stats  HASH    counters
--   derived from ARGV base (same hash tag): t:<id> HASH, p:<id> STRING, e:<id> STRING, u:<digest> STRING
-- ARGV: 1 base, 2 fanoutBatch, 3 scanLimit (newest leases looked at), 4 count, then count claim nonces
-- Reply: {now, released, canceled}
-- keys: fixed=4 per-item=0
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
local base = ARGV[1]

-- Integer or nil: fields and ARGV arrive as strings; fractions, inf and nan must not reach a write.
local function int(x)
  local num = tonumber(x)
  if num and num == math.floor(num) and math.abs(num) < 2 ^ 53 then return num end
end

local fanoutBatch, scanLimit, count = int(ARGV[2]), int(ARGV[3]), int(ARGV[4])
if not (#KEYS == 4 and base and fanoutBatch and fanoutBatch >= 1 and scanLimit and scanLimit >= 1 and count
    and count >= 0 and #ARGV == 4 + count) then
  return redis.error_reply('ERR recover: bad KEYS/ARGV')
end

local lost = {}
for i = 1, count do lost[ARGV[4 + i]] = true end

local released, canceled = 0, 0
-- A lost claim leased its tasks last, so they sit among the latest deadlines.
for _, id in ipairs(redis.call('ZREVRANGE', lease, 0, scanLimit - 1)) do
  local tk = base .. 't:' .. id
  local r = pread('HMGET', tk, 'k', 'v', 'cr', 'u', 's')
  local nonce = type(r) == 'table' and not r.err and type(r[1]) == 'string' and r[1]:match('^(.*):%d+$')
  local v = nonce and int(r[2])
  if nonce and lost[nonce] and v and r[5] == 'A' then
    if r[3] == '1' then
      -- Cancelled meanwhile: giving it back would run it again. Undeclared keys first, the index last.
      if r[4] and r[4] ~= '' and pread('GET', base .. 'u:' .. r[4]) == id then
        redis.call('DEL', base .. 'u:' .. r[4])
      end
      redis.call('DEL', tk, base .. 'p:' .. id, base .. 'e:' .. id)
      redis.call('ZREM', lease, id)
      canceled = canceled + 1
    else
      redis.call('ZREM', lease, id)
      redis.call('HDEL', tk, 'k')
      redis.call('HSET', tk, 'v', math.max(v - 1, 0), 's', 'R')
      redis.call('LPUSH', ready, id) -- head: it was claimed in its turn
      released = released + 1
    end
  end
end

if canceled > 0 then redis.call('HINCRBY', stats, 'canceled', canceled) end
if released > 0 then
  redis.call('HINCRBY', stats, 'recovered', released)
  local want = math.min(math.ceil(redis.call('LLEN', ready) / fanoutBatch), 64) - redis.call('LLEN', wake)
  for _ = 1, want do redis.call('RPUSH', wake, 1) end
end
return {now, released, canceled}
