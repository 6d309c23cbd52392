-- Writes a bloom filter's config unless one exists (Redisson's
-- RBloomFilter.tryInit). The bitmap is not touched.
-- KEYS[1] config hash ({name}:config)
-- KEYS[2] bitmap (name), checked for its type only
-- ARGV[1] size (bits), ARGV[2] hashIterations, ARGV[3] expectedInsertions,
-- ARGV[4] falseProbability
-- Returns 1 when it wrote the config, 0 when a config already existed.
local wrong = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local ct = redis.call('type', KEYS[1]).ok
if ct ~= 'none' and ct ~= 'hash' then
    return redis.error_reply(wrong)
end
local bt = redis.call('type', KEYS[2]).ok
if bt ~= 'none' and bt ~= 'string' then
    return redis.error_reply(wrong)
end
if ct == 'hash' then
    return 0
end
redis.call('hset', KEYS[1], 'size', ARGV[1], 'hashIterations', ARGV[2],
    'expectedInsertions', ARGV[3], 'falseProbability', ARGV[4])
return 1
