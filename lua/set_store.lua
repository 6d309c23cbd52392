-- set_store: store the union, intersection or difference of Sets in a
-- destination Set (SUNIONSTORE, SINTERSTORE, SDIFFSTORE), refusing a
-- destination of another type, which the command alone would overwrite.
--
-- KEYS[1]   destination set
-- KEYS[2..] source sets (the first is the one the call was made on)
-- ARGV[1]   'sunionstore', 'sinterstore' or 'sdiffstore'
--
-- Returns the destination's new size. A destination or source of another
-- type is a WRONGTYPE error, and nothing is written.
local op = ARGV[1]
if op ~= 'sunionstore' and op ~= 'sinterstore' and op ~= 'sdiffstore' then
  return redis.error_reply('ERR set_store: unknown operation ' .. tostring(op))
end
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'set' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
return redis.call(op, unpack(KEYS))
