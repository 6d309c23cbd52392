-- permit_available: the available permits of a Redisson-compatible
-- RPermitExpirableSemaphore, after moving back those whose lease ended.
--
-- KEYS[1]  available permits (string; missing = 0)
-- KEYS[2]  held permits ({name}:timeout zset, score = expiry in ms)
-- KEYS[3]  channel redisson_sc:{name}: the number of available permits is
--          published when expired permits come back
-- ARGV[1]  publish command ('publish' or 'spublish')
--
-- Returns {available, held}: held = permits still held. Clock: the server's
-- (TIME). A key of the wrong type fails the script before anything is written.
local raw = redis.call('get', KEYS[1])
local held = redis.call('zcard', KEYS[2])
if raw and not string.match(raw, '^%-?%d+$') then
    return redis.error_reply('WRONGTYPE semaphore permits are not an integer')
end
local available = tonumber(raw or '0')
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local back = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if back > 0 then
    available = redis.call('incrby', KEYS[1], back)
    if available > 0 then
        redis.call(ARGV[1], KEYS[3], available)
    end
end
return {available, held - back}
