-- a: returns b()
--- @include "b"
local function a() return b() end
