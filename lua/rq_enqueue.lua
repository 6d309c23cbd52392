-- rq_enqueue: add one job to a ReliableQueue, once per call and once per
-- deduplication id within its window.
-- prelude: delayq, rq
--
-- KEYS[1]  queue: stream of jobs
-- KEYS[2]  delayed jobs: zset, job id -> due time (server ms)
-- KEYS[3]  delayed job bodies: hash, job id -> the fields, packed (prelude_rq)
-- KEYS[4]  call marker (redisson_rq_call:{name}:<client uuid>:<n>): the result
-- KEYS[5]  deduplication key (redisson_rq_dedup:{name}:<id>), or KEYS[4]
-- ARGV[1]  payload field name (codec-encoded "payload")
-- ARGV[2]  payload (codec-encoded value)
-- ARGV[3]  delay in ms (0: now)
-- ARGV[4]  job id of a delayed job
-- ARGV[5]  call marker lifetime in ms (the retry window)
-- ARGV[6]  deduplication window in ms (0: no deduplication)
--
-- Returns {1, job id} when it added the job, {0, job id} when the
-- deduplication id names a job already enqueued (the id is that job's).
-- A job added now is a stream entry whose id is the job id; a delayed one
-- waits in KEYS[2]/KEYS[3] until a worker's rq_fetch moves it. A resend
-- of the call finds its marker and reports the first result. Fails with
-- WRONGTYPE, changing nothing, when KEYS[1] holds another type.
local done = redis.call('get', KEYS[4])
if done then
  return {tonumber(string.sub(done, 1, 1)), string.sub(done, 3)}
end
local bad = delayqWrongType(KEYS[1], 'stream')
if bad then
  return bad
end
local dedup = tonumber(ARGV[6])
if dedup > 0 then
  local prev = redis.call('get', KEYS[5])
  if prev then
    redis.call('set', KEYS[4], '0:' .. prev, 'px', ARGV[5])
    return {0, prev}
  end
end
local id
local delay = tonumber(ARGV[3])
if delay > 0 then
  local now = delayqNow()
  id = ARGV[4]
  redis.call('zadd', KEYS[2], now + delay, id)
  redis.call('hset', KEYS[3], id, pack_fields({ARGV[1], ARGV[2], 'rq:id', id, 'rq:enq', tostring(now)}))
else
  id = redis.call('xadd', KEYS[1], '*', ARGV[1], ARGV[2])
end
if dedup > 0 then
  redis.call('set', KEYS[5], id, 'px', dedup)
end
redis.call('set', KEYS[4], '1:' .. id, 'px', ARGV[5])
return {1, id}
