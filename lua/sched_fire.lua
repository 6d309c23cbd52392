-- sched_fire: fire one instant of a Scheduler job, at most once across all
-- instances, judged on the server's clock.
--
-- KEYS[1]  the scheduler's definitions (hash: job -> definition)
-- KEYS[2]  the scheduler's state (hash: job -> last fired instant in ms,
--          "<job>\nskipped" -> instants skipped)
-- KEYS[3]  the scheduler's fencing counter (string)
-- KEYS[4]  the job's runs (sorted set: "<token> <owner>" -> lease end in ms)
-- KEYS[5]  optional, tests only: a list every decision is appended to
-- ARGV[1]  the job's name
-- ARGV[2]  the instant in ms since the Unix epoch
-- ARGV[3]  the definition the caller scheduled by
-- ARGV[4]  the caller's owner id
-- ARGV[5]  the run's lease in ms
-- ARGV[6]  how many earlier instants the caller's catch-up policy skips
--          with this one (recorded as skipped)
--
-- Returns
--   {1, token, now_us}   fired: the instant is the job's last fired, the
--                        caller holds the run's lease (member
--                        "<token> <owner>") and token is the run's
--                        fencing token, max(previous + 1, now in µs)
--   {0, now_us}          skipped: a run of the job holds its lease and the
--                        job does not allow overlapping runs; the instant
--                        counts as fired (and skipped)
--   {-1, ms}             too early: the instant is ms in the future
--   {-2, last}           already fired: the job's last fired instant is
--                        last, at or after this one
--   {-3}                 the job's definition is not ARGV[3] (changed or
--                        removed): nothing written
local t = redis.call('time')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local job, instant = ARGV[1], tonumber(ARGV[2])
local def = redis.call('hget', KEYS[1], job)
if def ~= ARGV[3] then
    return {-3}
end
if instant > nowMs then
    return {-1, instant - nowMs}
end
local last = tonumber(redis.call('hget', KEYS[2], job) or '')
if last and last >= instant then
    return {-2, last}
end
local skipped = tonumber(ARGV[6])
local function log(line)
    if #KEYS >= 5 then
        redis.call('rpush', KEYS[5], line)
    end
end
if skipped > 0 then
    redis.call('hincrby', KEYS[2], job .. '\nskipped', skipped)
    log('catchup ' .. job .. ' ' .. ARGV[2] .. ' ' .. skipped)
end
redis.call('hset', KEYS[2], job, ARGV[2])
redis.call('zremrangebyscore', KEYS[4], '-inf', string.format('%d', nowMs))
-- The definition's last line is "overlap 0" or "overlap 1".
if string.sub(def, -10) == '\noverlap 0' and redis.call('zcard', KEYS[4]) > 0 then
    redis.call('hincrby', KEYS[2], job .. '\nskipped', 1)
    log('skip ' .. job .. ' ' .. ARGV[2] .. ' ' .. string.format('%d', nowUs))
    return {0, nowUs}
end
local token = math.max(tonumber(redis.call('get', KEYS[3]) or '0') + 1, nowUs)
local tokenS = string.format('%d', token)
redis.call('set', KEYS[3], tokenS)
local lease = tonumber(ARGV[5])
redis.call('zadd', KEYS[4], string.format('%d', nowMs + lease), tokenS .. ' ' .. ARGV[4])
if redis.call('pttl', KEYS[4]) < lease then
    redis.call('pexpire', KEYS[4], lease)
end
log('fire ' .. job .. ' ' .. ARGV[2] .. ' ' .. tokenS .. ' ' .. string.format('%d', nowUs))
return {1, token, nowUs}
