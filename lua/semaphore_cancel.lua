-- semaphore_cancel: end an acquire call that did not return its permits to
-- the caller: give back the permits it took if a reply was lost, forbid a
-- late resend of it, and drop its reservation.
--
-- KEYS[1]  semaphore: string, the available permits
-- KEYS[2]  reservation hash (redisson_sc_reservation:{name})
-- KEYS[3]  call marker (redisson_sc_call:{name}:<call id>)
-- KEYS[4]  channel (redisson_sc:{name})
-- ARGV[1]  permits the call asked for
-- ARGV[2]  call id
-- ARGV[3]  call marker lifetime in ms, or 0 when no acquire of the call can
--          still be in flight (no marker is then written)
-- ARGV[4]  publish command: 'publish' or 'spublish'
--
-- Returns 1 when permits taken by the call were given back, 0 otherwise.
local undone = 0
if redis.call('get', KEYS[3]) == '1' then
    local v = redis.call('incrby', KEYS[1], ARGV[1])
    redis.call(ARGV[4], KEYS[4], v)
    undone = 1
end
if tonumber(ARGV[3]) > 0 then
    redis.call('set', KEYS[3], '0', 'px', ARGV[3])
end
if redis.call('hget', KEYS[2], 'id') == ARGV[2] then
    redis.call('del', KEYS[2])
    if undone == 0 then
        -- Permits held back for this call are free for others now.
        local v = tonumber(redis.pcall('get', KEYS[1]))
        if v and v > 0 then
            redis.call(ARGV[4], KEYS[4], v)
        end
    end
end
return undone
