-- ids: the rule of Names.checkTaskId and Names.checkRateKey (1-64 ASCII letters, digits, '.', '-', '_', ':'). Java
-- cannot take an id that breaks it, so leasing one would fail the whole call, and the same hint would come back at the
-- head for ever; a rate key that breaks it is not this library's data and limits nothing.
local function validId(id)
  return #id >= 1 and #id <= 64 and not string.find(id, '[^A-Za-z0-9%.%-_:]')
end
