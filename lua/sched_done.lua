-- sched_done: end a Scheduler run's lease (its handler returned).
--
-- KEYS[1]  the runs of the job (sorted set)
-- ARGV[1]  the run's member ("<token> <owner>")
--
-- Returns 1 when the run still held its lease, 0 when it had lost it.
local t = redis.call('time')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = tonumber(redis.call('zscore', KEYS[1], ARGV[1]) or '')
redis.call('zrem', KEYS[1], ARGV[1])
if s and s > nowMs then
    return 1
end
return 0
