redis.replicate_commands()
--- @include a
return 1
