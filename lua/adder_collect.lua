-- adder_collect: the caller's side of a sum or reset request of Redisson's
-- adder protocol: once every receiver answered (the semaphore counts
-- ARGV[1] permits), read the counter and the flushed part and delete the
-- request's keys.
--
-- KEYS[1]  the request's semaphore: {name}:<request id>:semaphore (string)
-- KEYS[2]  the request's counter: {name}:<request id>:counter (string)
-- KEYS[3]  flushed part: {name}:adder-flushed (string)
-- ARGV[1]  receivers the request's PUBLISH counted
--
-- Returns {0} while answers are missing, else {1, counter or '0', flushed
-- part or '0'}.
local got = tonumber(redis.call('get', KEYS[1]) or '0')
if got == nil or got < tonumber(ARGV[1]) then
    return {0}
end
local v = redis.call('get', KEYS[2]) or '0'
redis.call('del', KEYS[1], KEYS[2])
return {1, v, redis.call('get', KEYS[3]) or '0'}
