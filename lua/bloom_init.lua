-- Writes a bloom filter's config unless one exists (Redisson's
-- RBloomFilter.tryInit). The bitmap is not touched.
-- KEYS[1] config hash ({name}:config)
-- KEYS[2] bitmap (name), checked for its type only
-- ARGV[1] size (bits), ARGV[2] hashIterations, ARGV[3] expectedInsertions,
-- ARGV[4] falseProbability
-- Returns 1 when it wrote the config, 0 when a config already existed.
-- prelude: bloom_config
--          (uses its wrong, bitmapOK)
local ct = redis.call('type', KEYS[1]).ok
if (ct ~= 'none' and ct ~= 'hash') or not bitmapOK() then
    return redis.error_reply(wrong)
end
if ct == 'hash' then
    return 0
end
redis.call('hset', KEYS[1], 'size', ARGV[1], 'hashIterations', ARGV[2],
    'expectedInsertions', ARGV[3], 'falseProbability', ARGV[4])
return 1
