-- int: integer or nil: fields and ARGV arrive as strings; fractions, inf and nan must not reach a write.
local function int(x)
  local num = tonumber(x)
  if num and num == math.floor(num) and math.abs(num) < 2 ^ 53 then return num end
end
