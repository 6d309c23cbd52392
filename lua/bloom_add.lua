-- Sets the bits of one or more values in a bloom filter, after checking that
-- the filter's config is the one the caller computed the bit indexes with.
-- KEYS[1] config hash ({name}:config)
-- KEYS[2] bitmap (name)
-- ARGV[1] size, ARGV[2] hashIterations the caller used
-- ARGV[3..] bit indexes, hashIterations of them per value
-- Returns the number of values that had at least one bit unset (probably new);
-- -1 when the filter has no config, -2 when its size or hashIterations differ.
-- prelude: bloom_config
--          (uses its bloomChecked)
local cfg, reply = bloomChecked()
if not cfg then
    return reply
end
local k = tonumber(ARGV[2])
local added = 0
for i = 3, #ARGV, k do
    local new = false
    for j = i, i + k - 1 do
        if redis.call('setbit', KEYS[2], ARGV[j], 1) == 0 then
            new = true
        end
    end
    if new then
        added = added + 1
    end
end
return added
