-- releaseUnique: free the task's uniqueness slot u:<digest> (u = the hash field u) unless another task holds it now.
-- u:<digest> is derived: the digest is read from the task hash inside the script.
-- uses: base
--- @include "pread"
local function releaseUnique(id, u)
  if u and u ~= '' then
    local uk = base .. 'u:' .. u
    if pread('GET', uk) == id then redis.call('DEL', uk) end
  end
end
