-- rq_purge: delete a ReliableQueue's dead letters.
-- prelude: delayq, rq
--
-- KEYS[1]  dead letters: stream
--
-- Returns how many dead letters were deleted. Fails with WRONGTYPE,
-- changing nothing, when the key holds another type.
local bad = delayqWrongType(KEYS[1], 'stream')
if bad then
  return bad
end
local n = redis.call('xlen', KEYS[1])
redis.call('unlink', KEYS[1])
return n
