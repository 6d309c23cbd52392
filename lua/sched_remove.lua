-- sched_remove: delete a Scheduler job's definition and state, and tell
-- the running instances (a run in progress keeps its lease until it ends).
--
-- KEYS[1]  the scheduler's definitions (hash)
-- KEYS[2]  the scheduler's state (hash)
-- KEYS[3]  the scheduler's channel
-- ARGV[1]  the job's name
-- ARGV[2]  publish command ('publish' or 'spublish')
--
-- Returns 1 when the job was defined, 0 when it was not (nothing published).
for i = 1, 2 do
    local t = redis.call('type', KEYS[i]).ok
    if t ~= 'none' and t ~= 'hash' then
        return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' holds a ' .. t .. ', not a hash')
    end
end
if redis.call('hdel', KEYS[1], ARGV[1]) == 0 then
    return 0
end
redis.call('hdel', KEYS[2], ARGV[1], ARGV[1] .. '\nskipped')
redis.call(ARGV[2], KEYS[3], ARGV[1])
return 1
