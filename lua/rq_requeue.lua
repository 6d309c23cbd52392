-- rq_requeue: put dead letters of a ReliableQueue back in its stream as
-- new jobs: their fields less the error and attempt count, keeping the
-- job id and enqueue time.
-- prelude: delayq, rq
--
-- KEYS[1]  dead letters: stream
-- KEYS[2]  queue: stream of jobs
-- ARGV[1]  most dead letters to move, from the oldest
-- ARGV[2..] the dead letters' entry ids; none: the oldest ARGV[1]
--
-- Returns how many were moved (an id not in the dead letters is skipped).
-- Fails with WRONGTYPE, changing nothing, when a key holds another type.
local bad = delayqWrongType(KEYS[1], 'stream') or delayqWrongType(KEYS[2], 'stream')
if bad then
  return bad
end
local entries = {}
if #ARGV > 1 then
  for i = 2, #ARGV do
    local e = redis.call('xrange', KEYS[1], ARGV[i], ARGV[i])
    if #e == 1 then
      entries[#entries + 1] = e[1]
    end
  end
else
  entries = redis.call('xrange', KEYS[1], '-', '+', 'count', ARGV[1])
end
for _, e in ipairs(entries) do
  local f = e[2]
  redis.call('xadd', KEYS[2], '*', unpack(with_meta(f, {
    'rq:id', meta_of(f, 'rq:id') or meta_of(f, 'rq:src'), 'rq:enq', meta_of(f, 'rq:enq')})))
  redis.call('xdel', KEYS[1], e[1])
end
return #entries
