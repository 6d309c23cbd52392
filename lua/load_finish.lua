-- load_finish: end a read-through load (ReadThrough): give the lease up if
-- the caller still holds it, remember an absence if asked, and wake the
-- instances waiting for the key.
--
-- KEYS[1]  {name}:load:<key hash>, the load's lease
-- KEYS[2]  {name}:notfound:<key hash>, the remembered absence
-- KEYS[3]  {name}:load, the channel the waiters listen on
-- ARGV[1]  token of the loader
-- ARGV[2]  how long to remember the absence, ms ('0': not at all)
-- ARGV[3]  publish command (PUBLISH or SPUBLISH)
-- ARGV[4]  message: the 16-byte key hash
--
-- Returns 1 when the lease was the caller's, 0 when it had expired.
local mine = 0
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('del', KEYS[1])
  mine = 1
end
if ARGV[2] ~= '0' then
  redis.call('set', KEYS[2], '1', 'px', ARGV[2])
end
redis.call(ARGV[3], KEYS[3], ARGV[4])
return mine
