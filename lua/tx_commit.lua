-- tx_commit: apply a transaction's buffered writes and release its locks,
-- in one step, only if the transaction still holds every one of its locks.
-- Redisson sends the same writes and unlocks in one MULTI ... EXEC, which
-- cannot refuse to apply when a lock was lost meanwhile; this script does.
--
-- KEYS[1]              the commit's latch: set once applied, so that the
--                      same call resent after a lost reply reports success;
--                      lives for the retry window at most
-- KEYS[2 .. n+1]       the lock hashes
-- KEYS[n+2 .. 2n+1]    their unlock channels
-- KEYS[2n+2 .. 2n+m+1] the data keys the writes name
-- ARGV[1]  owner field "<client uuid>:<owner number>:<transaction id>"
-- ARGV[2]  n, the number of locks
-- ARGV[3]  m, the number of data keys
-- ARGV[4]  publish command: 'publish' or 'spublish'
-- ARGV[5]  latch lifetime in ms
-- ARGV[6 .. 5+m]  the Redis type each data key must have when it exists
--                 ('string', 'hash', 'set', 'zset'; '*': any, a channel)
-- ARGV[6+m ..]    the writes, in order: an op, the index of its data key
--                 (1 .. m), then its arguments:
--                   set   value        SET key value
--                   del                DEL key
--                   hset  field value  HSET key field value
--                   hdel  field        HDEL key field
--                   sadd  member       SADD key member
--                   srem  member       SREM key member
--                   zadd  score member ZADD key score member (a LocalCachedMap's
--                                      updates log)
--                   publish message    ARGV[4] key message (key: a channel,
--                                      a LocalCachedMap's invalidation)
--                   mcput  i2 .. i9 field entry ttl idle
--                                      a MapCache's put (key: its hash;
--                                      i2 .. i9 the indexes of its companion
--                                      keys and channels, in
--                                      prelude_mapcache's KEYS order):
--                                      mcPut(field, 'put', entry, ttl, idle)
--                   mcdel  i2 .. i9 field
--                                      a MapCache's remove: mcRemove(field)
--
-- Returns 1 when applied (or already applied: a resend), -i when lock i is
-- not held by the owner any more (its lease ran out, or it was forced
-- open): then nothing is written and no lock is touched. A data key of
-- another type is a WRONGTYPE error reply, also before anything is written.
--
-- prelude: mapcache
--          (its mcPut and mcRemove, pointed at a MapCache's keys by mcK and
--          at ARGV[4] by mcPub: the same writes as MapCache.Put and Remove)
local n = tonumber(ARGV[2])
local m = tonumber(ARGV[3])
for i = 1, n do
    if redis.call('hexists', KEYS[1 + i], ARGV[1]) == 0 then
        if redis.call('exists', KEYS[1]) == 1 then
            return 1
        end
        return -i
    end
end
for j = 1, m do
    local t = redis.call('type', KEYS[1 + 2 * n + j])['ok']
    if t ~= 'none' and t ~= ARGV[5 + j] and ARGV[5 + j] ~= '*' then
        return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
    end
end
local arity = {set = 1, del = 0, hset = 2, hdel = 1, sadd = 1, srem = 1, zadd = 2, publish = 1,
    mcput = 12, mcdel = 9}
mcPub = ARGV[4]
local i = 6 + m
while i <= #ARGV do
    local op = ARGV[i]
    local key = KEYS[1 + 2 * n + tonumber(ARGV[i + 1])]
    local a = arity[op]
    if a >= 9 then
        mcK = {key}
        for j = 2, 9 do
            mcK[j] = KEYS[1 + 2 * n + tonumber(ARGV[i + j])]
        end
        if op == 'mcput' then
            mcPut(ARGV[i + 10], 'put', ARGV[i + 11], tonumber(ARGV[i + 12]), tonumber(ARGV[i + 13]))
        else
            mcRemove(ARGV[i + 10])
        end
    elseif op == 'publish' then
        redis.call(ARGV[4], key, ARGV[i + 2])
    elseif a == 1 then
        redis.call(op, key, ARGV[i + 2])
    elseif a == 2 then
        redis.call(op, key, ARGV[i + 2], ARGV[i + 3])
    else
        redis.call(op, key)
    end
    i = i + 2 + a
end
for j = 1, n do
    redis.call('del', KEYS[1 + j])
    redis.call(ARGV[4], KEYS[1 + n + j], 0)
end
redis.call('set', KEYS[1], 1, 'px', ARGV[5])
return 1
