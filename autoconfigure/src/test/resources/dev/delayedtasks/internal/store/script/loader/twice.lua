--- @include "b"
--- @include "a"
--- @include "b"
return a() + b()
