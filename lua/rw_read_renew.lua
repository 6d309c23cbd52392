-- rw_read_renew: extend the leases of many read holds in one call (watchdog).
-- Only this client's own timeout keys are renewed (Redisson #7098: renewing
-- other clients' keys kept dead readers alive).
--
-- KEYS[i]      lock hash i (all in one hash slot on Cluster)
-- ARGV[1]      new lease in milliseconds
-- ARGV[2i]     owner field that must still hold reads of KEYS[i]
-- ARGV[2i+1]   that owner's read-hold timeout prefix
--
-- Returns an array: 1 where the owner's read holds were renewed, 0 where it
-- holds none any more (or its first hold's lease already ran out).
local lease = tonumber(ARGV[1])
local renewed = {}
for i = 1, #KEYS do
    local count = tonumber(redis.pcall('hget', KEYS[i], ARGV[2 * i]))
    renewed[i] = 0
    if count ~= nil and count > 0 and redis.call('pexpire', ARGV[2 * i + 1] .. ':1', lease) == 1 then
        for n = count, 2, -1 do
            redis.call('pexpire', ARGV[2 * i + 1] .. ':' .. n, lease)
        end
        if redis.call('pttl', KEYS[i]) < lease then
            redis.call('pexpire', KEYS[i], lease)
        end
        renewed[i] = 1
    end
end
return renewed
