-- sched_load: read every job of a Scheduler, with its state, and the
-- server's clock.
--
-- KEYS[1]  the scheduler's definitions (hash)
-- KEYS[2]  the scheduler's state (hash)
--
-- Returns {sec, usec, job, definition, last fired ms ('' when unknown),
-- skipped, ...}.
for i = 1, 2 do
    local t = redis.call('type', KEYS[i]).ok
    if t ~= 'none' and t ~= 'hash' then
        return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' holds a ' .. t .. ', not a hash')
    end
end
local t = redis.call('time')
local out = {t[1], t[2]}
local defs = redis.call('hgetall', KEYS[1])
for i = 1, #defs, 2 do
    local job = defs[i]
    out[#out + 1] = job
    out[#out + 1] = defs[i + 1]
    out[#out + 1] = redis.call('hget', KEYS[2], job) or ''
    out[#out + 1] = redis.call('hget', KEYS[2], job .. '\nskipped') or '0'
end
return out
