-- inspect_sched_runs: read the runs in progress of a Scheduler's jobs
-- (read-only).
--
-- KEYS[i]  job i's runs (sorted set: "<token> <owner>" -> lease end in ms)
--
-- Returns {sec, usec, n1, member, lease end ms, ..., n2, ...}: for each job
-- the number of runs whose lease has not ended, then those runs.
local t = redis.call('time')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {t[1], t[2]}
for i = 1, #KEYS do
    local r = redis.call('zrangebyscore', KEYS[i], '(' .. string.format('%d', nowMs), '+inf', 'withscores')
    out[#out + 1] = tostring(#r / 2)
    for j = 1, #r do
        out[#out + 1] = r[j]
    end
end
return out
