--- @include "c"
return 1
