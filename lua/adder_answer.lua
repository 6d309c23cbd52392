-- adder_answer: one client's answer, for all its LongAdder or DoubleAdder
-- instances of one name, to a sum or reset request of Redisson's adder
-- protocol ("<cmd>:<request id>" on {name}:adder-topic): add their parts to
-- the request's counter,
-- then release one permit of the request's semaphore, publishing the new
-- count on its channel as Redisson's RSemaphore.release does.
--
-- KEYS[1]  the request's counter: {name}:<request id>:counter (string)
-- KEYS[2]  the request's semaphore: {name}:<request id>:semaphore (string)
-- KEYS[3]  the semaphore's channel: redisson_sc:{name}:<request id>:semaphore
-- KEYS[4]  flushed part: {name}:adder-flushed (string; flushed mode only)
-- ARGV[1]  'incrby' or 'incrbyfloat' to add the parts, '' for a reset
--          (nothing added)
-- ARGV[2]  the in-memory part of this client's instances (decimal text),
--          added to the counter
-- ARGV[3]  'publish' or 'spublish'
-- ARGV[4]  the part of its flushed-mode instances (decimal text), added to
--          KEYS[4] (the Go caller reads both), or '' for none
-- ARGV[5]  lifetime in ms of the request's keys (the caller deletes them)
--
-- Returns the semaphore's new count.
if ARGV[1] ~= '' then
    if ARGV[4] ~= '' then
        redis.call(ARGV[1], KEYS[4], ARGV[4])
    end
    redis.call(ARGV[1], KEYS[1], ARGV[2])
    redis.call('pexpire', KEYS[1], ARGV[5])
end
local v = redis.call('incrby', KEYS[2], 1)
redis.call('pexpire', KEYS[2], ARGV[5])
redis.call(ARGV[3], KEYS[3], v)
return v
