-- deleteTask: delete a task's hash, payload and error record (derived from its id).
-- uses: base
local function deleteTask(id)
  redis.call('DEL', base .. 't:' .. id, base .. 'p:' .. id, base .. 'e:' .. id)
end
