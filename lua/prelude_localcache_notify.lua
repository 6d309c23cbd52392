-- prelude_localcache_notify: telling the other instances of a LocalCachedMap
-- about a change, used by the localcache_* writes.
--
-- notify(channel, log, publish, msg, mode, time, members): mode '0'
-- (SyncStrategy None) tells nobody; '1' publishes msg (an invalidate or an
-- update message) on channel with the publish command (PUBLISH or
-- SPUBLISH); '2' also adds each of members (key hash .. ':' .. 8 random
-- bytes) to the updates log at score time (the writer's clock, ms), which
-- instances with ReconnectionStrategy Load read after a reconnect, as
-- Redisson's do.
--
-- notifyCheck(log, mode) reads the updates log's type when mode '2' will
-- write it: each write calls it before its first write, so that a log of
-- another type fails the script with the map unchanged (and not written
-- with its message unpublished).
local function notifyCheck(log, mode)
  if mode == '2' then
    redis.call('zcard', log)
  end
end

local function notify(channel, log, publish, msg, mode, time, members)
  if mode == '0' then
    return
  end
  if mode == '2' then
    for _, m in ipairs(members) do
      redis.call('zadd', log, time, m)
    end
  end
  redis.call(publish, channel, msg)
end
