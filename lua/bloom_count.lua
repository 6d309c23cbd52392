-- Reads what a bloom filter's element estimate needs, in one step.
-- KEYS[1] config hash ({name}:config)
-- KEYS[2] bitmap (name)
-- Returns {size, hashIterations, number of set bits}; -1 when the filter has
-- no config.
-- prelude: bloom_config
--          (uses its bloomConfig)
local cfg, reply = bloomConfig()
if not cfg then
    return reply
end
return {cfg[1], cfg[2], redis.call('bitcount', KEYS[2])}
