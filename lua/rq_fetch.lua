-- rq_fetch: one fetch of a ReliableQueue worker: move the delayed jobs
-- that are due into the stream, take over the jobs whose lease ended
-- (their worker died or was cut off), and read new jobs, up to a count.
-- prelude: delayq, rq
--
-- KEYS[1]  queue: stream of jobs
-- KEYS[2]  delayed jobs: zset, job id -> due time (server ms)
-- KEYS[3]  delayed job bodies: hash, job id -> the fields, packed (prelude_rq)
-- KEYS[4]  dead letters: stream
-- ARGV[1]  consumer group
-- ARGV[2]  consumer (this worker)
-- ARGV[3]  most jobs to return
-- ARGV[4]  lease in ms: pending jobs idle this long are taken over; 0:
--          take none over in this call
-- ARGV[5]  most deliveries of a job
--
-- Returns {server ms, ms until the next delayed job is due or -1,
-- {{entry id, deliveries of this entry, fields}, ...}}. A job taken over
-- that has had its most deliveries (every one of them lost with its
-- worker) goes to the dead letters instead, with the reason in rq:err.
local now = delayqNow()
local due = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'limit', 0, 100)
for _, id in ipairs(due) do
  local packed = redis.call('hget', KEYS[3], id)
  if packed then
    redis.call('xadd', KEYS[1], '*', unpack(unpack_fields(packed)))
    redis.call('hdel', KEYS[3], id)
  end
  redis.call('zrem', KEYS[2], id)
end
local group, consumer = ARGV[1], ARGV[2]
local count = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local most = tonumber(ARGV[5])
local out = {}
if lease > 0 then
  local idle = redis.call('xpending', KEYS[1], group, 'idle', lease, '-', '+', count)
  for _, p in ipairs(idle) do
    local id, n = p[1], p[4]
    local fields = entry_fields(KEYS[1], id)
    local total = n + (tonumber(meta_of(fields, 'rq:att')) or 0)
    if total >= most then
      local reason = 'lease ended ' .. n .. ' times: the worker died or lost Redis'
      redis.call('xadd', KEYS[4], '*', unpack(with_meta(fields, {
        'rq:id', meta_of(fields, 'rq:id') or id, 'rq:enq', meta_of(fields, 'rq:enq'),
        'rq:att', tostring(total), 'rq:err', reason, 'rq:src', id, 'rq:died', tostring(now)})))
      redis.call('xack', KEYS[1], group, id)
      redis.call('xdel', KEYS[1], id)
    else
      local c = redis.call('xclaim', KEYS[1], group, consumer, lease, id)
      if c[1] then
        out[#out + 1] = {c[1][1], n + 1, c[1][2]}
      end
    end
  end
end
if #out < count then
  local r = redis.call('xreadgroup', 'group', group, consumer, 'count', count - #out, 'streams', KEYS[1], '>')
  if r then
    for _, e in ipairs(r[1][2]) do
      out[#out + 1] = {e[1], 1, e[2]}
    end
  end
end
local nextDue = -1
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if #first == 2 then
  nextDue = math.max(tonumber(first[2]) - now, 0)
end
return {now, nextDue, out}
