-- prelude_semqueue: the queue of this library's waiters of a Semaphore or a
-- PermitExpirableSemaphore, shared by semaphore_acquire, semaphore_add,
-- semaphore_set, semaphore_cancel and the scripts that join prelude_permits.
--
-- The keys, at these places unless a script names others with
-- semQueueKeys (the PermitExpirableSemaphore's scripts: KEYS[4..6]):
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
--   semQueueKeys(queue, waiters, wakePrefix)
--                        names the queue's keys when they are not at
--                        KEYS[2], KEYS[3], KEYS[5]
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
local SQ, SW, SWAKE = KEYS[2], KEYS[3], KEYS[5]

local function semQueueKeys(queue, waiters, wakePrefix)
    SQ, SW, SWAKE = queue, waiters, wakePrefix
end

local function semNow()
    local t = redis.call('time')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function semEntry(id, now)
    local e = redis.call('hget', SW, id)
    if e then
        local n, deadline = string.match(e, '^(%d+):(%d+)$')
        if n and tonumber(deadline) > now then
            return tonumber(n)
        end
    end
    redis.call('zrem', SQ, id)
    redis.call('hdel', SW, id)
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
    for _, id in ipairs(redis.call('zrange', SQ, 0, QUEUE_SCAN - 1)) do
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
        redis.call(pub, SWAKE .. c, table.concat(wake[c], ' '))
    end
end
