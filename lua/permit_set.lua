-- permit_set: set the permits of a Redisson-compatible
-- RPermitExpirableSemaphore, only if they were never set.
--
-- KEYS[1]  available permits (string)
-- KEYS[2]  channel redisson_sc:{name}
-- KEYS[3]  latch of this call (redisson_permit_latch:{name}:<client>:<n>),
--          set when this call set the permits, so that the call resent after
--          a lost reply still reports it; lives for the retry window at most
-- ARGV[1]  permits (>= 0)
-- ARGV[2]  publish command ('publish' or 'spublish')
-- ARGV[3]  latch lifetime in ms
--
-- Returns 1 when KEYS[1] was missing and is now ARGV[1] (published), 0 when it
-- already existed (nothing changed). A key of another type fails the script
-- (WRONGTYPE) before anything is written.
if redis.call('get', KEYS[1]) then
    return redis.call('exists', KEYS[3])
end
redis.call('set', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[3])
return 1
