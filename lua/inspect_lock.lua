-- inspect_lock: read what an operator asks of a lock (plain, fair or
-- read-write), whoever holds it, in one call. Writes nothing.
--
-- KEYS[1]  lock hash
-- KEYS[2]  fencing counter redisson_lock_token:{name}
-- KEYS[3]  fair queue redisson_lock_queue:{name}
-- KEYS[4]  fair deadlines redisson_lock_timeout:{name}
-- KEYS[5]  fair liveness redisson_lock_alive:{name} (this library's waiters)
-- KEYS[6]  read-hold lease prefix "{name}": a reader's level n lease is
--          KEYS[6] .. ':' .. <owner> .. ':rwlock_timeout:' .. n
-- ARGV[1]  most waiters to return from the queue's head
--
-- Returns {type, pttl, fields, token, queueLength, queue, deadlines, alive,
-- readLeases, now}: type = the lock key's Redis type ('none' when free), pttl
-- its PTTL, fields its HGETALL, token the counter's value (false when
-- absent), queue the first ARGV[1] waiters, deadlines and alive the scores of
-- those waiters in KEYS[4] and KEYS[5] (false where absent), readLeases
-- {owner, level, pttl, ...} for every read hold of a read-write lock, now the
-- server's clock in ms. Errors: WRONGTYPE when a key holds another type.
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'hash' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local fields = {}
if t == 'hash' then
    fields = redis.call('hgetall', KEYS[1])
end
local leases = {}
if t == 'hash' and redis.call('hexists', KEYS[1], 'mode') == 1 then
    for i = 1, #fields, 2 do
        local f = fields[i]
        if f ~= 'mode' and string.sub(f, -6) ~= ':write' then
            for n = 1, tonumber(fields[i + 1]) or 0 do
                leases[#leases + 1] = f
                leases[#leases + 1] = n
                leases[#leases + 1] = redis.call('pttl', KEYS[6] .. ':' .. f .. ':rwlock_timeout:' .. n)
            end
        end
    end
end
local queue = redis.call('lrange', KEYS[3], 0, tonumber(ARGV[1]) - 1)
local deadlines, alive = {}, {}
for i = 1, #queue do
    deadlines[i] = redis.call('zscore', KEYS[4], queue[i]) or false
    alive[i] = redis.call('zscore', KEYS[5], queue[i]) or false
end
local now = redis.call('time')
return {t, redis.call('pttl', KEYS[1]), fields, redis.call('get', KEYS[2]) or false,
    redis.call('llen', KEYS[3]), queue, deadlines, alive, leases,
    tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)}
