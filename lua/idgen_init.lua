-- Initialises an id generator (Redisson's RIdGenerator.tryInit): sets the
-- counter and the allocation size, each only where it does not exist yet.
-- KEYS[1] counter (name): the next id to hand out
-- KEYS[2] allocation size ({name}:allocation)
-- ARGV[1] first id, ARGV[2] allocation size
-- Returns 1 when it set the allocation size, 0 when one existed (Redisson
-- reports only that); an error, with nothing written, when either key holds
-- another type or a value that is not an integer.
local wrong = 'WRONGTYPE Operation against a key holding the wrong kind of value'
for i = 1, 2 do
    local t = redis.call('type', KEYS[i]).ok
    if t ~= 'none' and t ~= 'string' then
        return redis.error_reply(wrong)
    end
    if t == 'string' and not string.match(redis.call('get', KEYS[i]), '^-?%d+$') then
        return redis.error_reply('ERR value is not an integer')
    end
end
redis.call('setnx', KEYS[1], ARGV[1])
return redis.call('setnx', KEYS[2], ARGV[2])
