-- lock_renew: extend the leases of many held locks in one call (watchdog).
--
-- KEYS[i]    lock hash i (all in one hash slot on Cluster)
-- ARGV[1]    new lease in milliseconds
-- ARGV[i+1]  owner field that must still hold KEYS[i]
--
-- Returns an array: 1 where the owner still held the lock and its lease was
-- extended, 0 where the lock is gone or held by someone else.
local renewed = {}
for i = 1, #KEYS do
    -- pcall: a key that became another type is simply not ours any more.
    if redis.pcall('hexists', KEYS[i], ARGV[i + 1]) == 1 then
        redis.call('pexpire', KEYS[i], ARGV[1])
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return renewed
