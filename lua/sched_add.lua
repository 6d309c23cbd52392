-- sched_add: store (or replace) a Scheduler job's definition and tell the
-- running instances.
--
-- KEYS[1]  the scheduler's definitions (hash: job -> definition)
-- KEYS[2]  the scheduler's state (hash: job -> last fired instant in ms,
--          "<job>\nskipped" -> instants skipped)
-- KEYS[3]  the scheduler's channel (redisson_scheduler__channel:{name})
-- ARGV[1]  the job's name
-- ARGV[2]  the job's definition (see scheduler_spec.go)
-- ARGV[3]  publish command ('publish' or 'spublish')
--
-- A new job's last fired instant is the server's clock now, so it fires
-- from its first instant after now; a redefined job keeps its state. The
-- message is the job's name. Returns 1 when the definition changed, 0 when
-- it was already stored as given (nothing published).
for i = 1, 2 do
    local t = redis.call('type', KEYS[i]).ok
    if t ~= 'none' and t ~= 'hash' then
        return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' holds a ' .. t .. ', not a hash')
    end
end
if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then
    return 0
end
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
if redis.call('hexists', KEYS[2], ARGV[1]) == 0 then
    local t = redis.call('time')
    redis.call('hset', KEYS[2], ARGV[1], string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)))
end
redis.call(ARGV[3], KEYS[3], ARGV[1])
return 1
