--- @include "nope"
return 1
