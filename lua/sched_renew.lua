-- sched_renew: renew the leases of Scheduler runs in progress, a batch of
-- them (the client's watchdog sends it, as it renews locks).
--
-- KEYS[i]    the runs of run i's job (sorted set: member -> lease end in ms)
-- ARGV[1]    the lease in ms
-- ARGV[1+i]  run i's member ("<token> <owner>")
--
-- Returns one integer per run: 1 renewed, 0 the lease is lost (it ran out,
-- or the run's entry is gone).
local t = redis.call('time')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS do
    local s = tonumber(redis.call('zscore', KEYS[i], ARGV[1 + i]) or '')
    if s and s > nowMs then
        redis.call('zadd', KEYS[i], 'xx', string.format('%d', nowMs + lease), ARGV[1 + i])
        if redis.call('pttl', KEYS[i]) < lease then
            redis.call('pexpire', KEYS[i], lease)
        end
        out[i] = 1
    else
        out[i] = 0
    end
end
return out
