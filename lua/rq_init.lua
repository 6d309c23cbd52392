-- rq_init: make a ReliableQueue ready for workers: its stream and consumer
-- group exist (the group starts at 0, so that jobs enqueued before the
-- first worker, by Go or by a Java RStream, are delivered).
-- prelude: delayq, rq
--
-- KEYS[1]  queue: stream of jobs
-- KEYS[2]  dead letters: stream
-- ARGV[1]  consumer group
--
-- Returns 1. Fails with WRONGTYPE, changing nothing, when either key holds
-- another type.
local bad = delayqWrongType(KEYS[1], 'stream') or delayqWrongType(KEYS[2], 'stream')
if bad then
  return bad
end
pcall(redis.call, 'xgroup', 'create', KEYS[1], ARGV[1], '0', 'mkstream')
return 1
