--- @include "x"
return 1
