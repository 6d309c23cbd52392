-- prelude_bloom_config: the header check of the bloom filter scripts
-- (bloom_add, bloom_contains, bloom_count, bloom_init): the types of the
-- filter's two keys and, for a filter that exists, its config.
--
-- KEYS[1]  config hash ({name}:config)
-- KEYS[2]  bitmap (name)
-- ARGV[1]  size, ARGV[2] hashIterations the caller used (bloomChecked only)
--
-- Defines locals, and runs nothing itself:
--   wrong           the WRONGTYPE message
--   bitmapOK()      reports whether KEYS[2] is missing or a string
--   bloomConfig()   returns {size, hashIterations} of KEYS[1]; else nil and
--                   the reply to return: -1 (no config) or a WRONGTYPE error
--                   (KEYS[1] not a hash, or KEYS[2] not a string)
--   bloomChecked()  as bloomConfig, and the reply -2 when the config's size or
--                   hashIterations differ from ARGV[1] and ARGV[2]
local wrong = 'WRONGTYPE Operation against a key holding the wrong kind of value'

local function bitmapOK()
    local bt = redis.call('type', KEYS[2]).ok
    return bt == 'none' or bt == 'string'
end

local function bloomConfig()
    local ct = redis.call('type', KEYS[1]).ok
    if ct == 'none' then
        return nil, -1
    end
    if ct ~= 'hash' or not bitmapOK() then
        return nil, redis.error_reply(wrong)
    end
    return redis.call('hmget', KEYS[1], 'size', 'hashIterations')
end

local function bloomChecked()
    local cfg, reply = bloomConfig()
    if cfg and (cfg[1] ~= ARGV[1] or cfg[2] ~= ARGV[2]) then
        return nil, -2
    end
    return cfg, reply
end

