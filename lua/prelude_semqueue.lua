-- prelude_semqueue: the queue of this library's Semaphore waiters, shared by
-- semaphore_acquire, semaphore_add, semaphore_set and semaphore_cancel.
--
-- KEYS[1]  semaphore: string, the available permits (missing = 0)
-- KEYS[2]  queue (redisson_sc_queue:{name}): zset, member = call id
--          "<client uuid>:<n>", score = when it queued (server ms)
-- KEYS[3]  waiters (redisson_sc_waiters:{name}): hash, call id ->
--          "<permits wanted>:<deadline in server ms>"
-- KEYS[4]  channel redisson_sc:{name} (Redisson's)
-- KEYS[5]  wake channel prefix redisson_sc_wake:{name}: ; a client listens
--          on the prefix followed by its uuid
--
-- Defines locals, and runs nothing itself:
--   QUEUE_SCAN           how many queued waiters one call looks at, at most
--   semNow()             the server clock in ms
--   semEntry(id, now)    the permits waiter id wants, or nil when it is not
--                        queued or its deadline passed (it is then dropped)
--   semSplit(id)         the client uuid and the call number of a call id
--   semServe(v, now, pub)
--                        wakes the waiters v available permits serve, in
--                        queue order, stopping at the first one they do not
--                        (first come, first served): publishes on each
--                        client's wake channel the call numbers of its
--                        waiters to wake, separated by spaces
local QUEUE_SCAN = 64

local function semNow()
    local t = redis.call('time')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function semEntry(id, now)
    local e = redis.call('hget', KEYS[3], id)
    if e then
        local n, deadline = string.match(e, '^(%d+):(%d+)$')
        if n and tonumber(deadline) > now then
            return tonumber(n)
        end
    end
    redis.call('zrem', KEYS[2], id)
    redis.call('hdel', KEYS[3], id)
    return nil
end

local function semSplit(id)
    local c, n = string.match(id, '^(.*):([^:]*)$')
    if not c then
        return id, ''
    end
    return c, n
end

local function semServe(v, now, pub)
    if v <= 0 then
        return
    end
    local need, wake, order = 0, {}, {}
    for _, id in ipairs(redis.call('zrange', KEYS[2], 0, QUEUE_SCAN - 1)) do
        local n = semEntry(id, now)
        if n then
            need = need + n
            if need > v then
                break
            end
            local c, call = semSplit(id)
            if not wake[c] then
                wake[c] = {}
                order[#order + 1] = c
            end
            table.insert(wake[c], call)
        end
    end
    for _, c in ipairs(order) do
        redis.call(pub, KEYS[5] .. c, table.concat(wake[c], ' '))
    end
end
