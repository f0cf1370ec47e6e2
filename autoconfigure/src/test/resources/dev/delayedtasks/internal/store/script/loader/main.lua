-- main: a script with includes
redis.replicate_commands()
--- @include "a"
return a()
