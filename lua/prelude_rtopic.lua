-- prelude_rtopic: what the reliable topic scripts (rtopic_publish,
-- rtopic_subscribe, rtopic_settle, rtopic_unsubscribe) share. The layout is
-- Redisson's RReliableTopic: a stream named after the topic whose entries
-- carry the encoded message in field m, one consumer group per subscriber
-- (group name = subscriber id), and a zset {name}:timeout of subscriber id
-- -> expiry in ms since the Unix epoch, refreshed by the live subscriber.
--
-- Defines locals, and runs nothing itself:
--   rtopicOpen(stream, timeouts)       the opening of rtopic_publish,
--                                      rtopic_subscribe and rtopic_settle:
--                                      the WRONGTYPE error reply when a key
--                                      holds another type; else nil and the
--                                      server's time in ms, once the expired
--                                      subscribers are removed (rtopicSweep)
--   rtopicWrongType(stream, timeouts)  the WRONGTYPE error reply when a key
--                                      holds another type; else nil
--   rtopicNow()                        the server's time in ms
--   rtopicSweep(stream, timeouts, now) destroys the group of every subscriber
--                                      whose expiry is before now
--   rtopicTrim(stream, maxLen, maxAge, now)
--                                      trims what every group has consumed
--                                      (delivered and acknowledged); with no
--                                      group, to maxLen entries (-1: no
--                                      bound) and maxAge ms (0: no bound)
local function rtopicWrongType(stream, timeouts)
    for _, kt in ipairs({{stream, 'stream'}, {timeouts, 'zset'}}) do
        local t = redis.call('type', kt[1]).ok
        if t ~= 'none' and t ~= kt[2] then
            return redis.error_reply('WRONGTYPE ' .. kt[1] .. ' holds a ' .. t .. ', not a ' .. kt[2])
        end
    end
    return nil
end

local function rtopicNow()
    local t = redis.call('time')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function rtopicSweep(stream, timeouts, now)
    local expired = redis.call('zrangebyscore', timeouts, 0, now - 1)
    local exists = redis.call('exists', stream) == 1
    for _, id in ipairs(expired) do
        if exists then
            redis.call('xgroup', 'destroy', stream, id)
        end
        redis.call('zrem', timeouts, id)
    end
end

local function rtopicOpen(stream, timeouts)
    local err = rtopicWrongType(stream, timeouts)
    if err then
        return err, nil
    end
    local now = rtopicNow()
    rtopicSweep(stream, timeouts, now)
    return nil, now
end

-- id ("ms-seq") as two numbers, plus next in the sequence; an id that
-- does not parse is 0-0, which keeps everything
local function rtopicSplit(id, next)
    local ms, seq = string.match(tostring(id), '^(%d+)-(%d+)$')
    if not ms then
        return {0, 0}
    end
    return {tonumber(ms), tonumber(seq) + next}
end

local function rtopicTrim(stream, maxLen, maxAge, now)
    if redis.call('exists', stream) == 0 then
        return 0
    end
    local groups = redis.call('xinfo', 'groups', stream)
    if #groups == 0 then
        local n = 0
        if maxLen >= 0 then
            n = n + redis.call('xtrim', stream, 'maxlen', maxLen)
        end
        if maxAge > 0 then
            n = n + redis.call('xtrim', stream, 'minid', string.format('%.0f-0', now - maxAge))
        end
        return n
    end
    local keep
    for _, g in ipairs(groups) do
        local f = {}
        for i = 1, #g, 2 do
            f[g[i]] = g[i + 1]
        end
        local from
        if tonumber(f['pending']) > 0 then
            from = rtopicSplit(redis.call('xpending', stream, f['name'])[2], 0)
        else
            from = rtopicSplit(f['last-delivered-id'], 1)
        end
        if keep == nil or from[1] < keep[1] or (from[1] == keep[1] and from[2] < keep[2]) then
            keep = from
        end
    end
    return redis.call('xtrim', stream, 'minid', string.format('%.0f-%.0f', keep[1], keep[2]))
end
