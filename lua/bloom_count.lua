-- Reads what a bloom filter's element estimate needs, in one step.
-- KEYS[1] config hash ({name}:config)
-- KEYS[2] bitmap (name)
-- Returns {size, hashIterations, number of set bits}; -1 when the filter has
-- no config.
local wrong = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local ct = redis.call('type', KEYS[1]).ok
if ct == 'none' then
    return -1
end
if ct ~= 'hash' then
    return redis.error_reply(wrong)
end
local bt = redis.call('type', KEYS[2]).ok
if bt ~= 'none' and bt ~= 'string' then
    return redis.error_reply(wrong)
end
local cfg = redis.call('hmget', KEYS[1], 'size', 'hashIterations')
return {cfg[1], cfg[2], redis.call('bitcount', KEYS[2])}
