-- b: returns 1
local function b() return 1 end
