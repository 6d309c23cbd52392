-- rq_settle: end one delivery of a ReliableQueue job, if the worker still
-- holds its lease: ack it (success), give it back with a due time
-- (retry), or move it to the dead letters; in each case the entry leaves
-- the stream (XACK, XDEL), so that the stream holds no settled job.
-- prelude: delayq, rq
--
-- KEYS[1]  queue: stream of jobs
-- KEYS[2]  delayed jobs: zset, job id -> due time (server ms)
-- KEYS[3]  delayed job bodies: hash, job id -> the fields, packed (prelude_rq)
-- KEYS[4]  dead letters: stream
-- ARGV[1]  consumer group
-- ARGV[2]  consumer (this worker)
-- ARGV[3]  entry id
-- ARGV[4]  how: ack, retry or dead
-- ARGV[5]  (retry, dead) job id
-- ARGV[6]  (retry, dead) deliveries so far, this one included
-- ARGV[7]  (retry) delay in ms before the job is due again (0: at once)
-- ARGV[8]  (retry, dead) the error, kept in rq:err ("" keeps the last)
-- ARGV[9]  (retry, dead) enqueue time, server ms
-- ARGV[10] (retry, dead) first delivery time, server ms ("" unknown)
-- ARGV[11] the entry's delivery count in the delivery being settled (""
--          or absent: any); a late call of an earlier delivery, which the
--          same worker has since taken over again, is refused
--
-- Returns 1 when done; 0 when the entry is pending for another consumer
-- or in a later delivery, or was settled by another (the lease was lost: nothing changes); 2 when
-- it is neither pending nor in the stream (this call's first run settled
-- it, and go-redis resent it; or it was deleted).
local state = lease_state(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[11])
if state ~= 1 then
  return state
end
local how = ARGV[4]
if how ~= 'ack' then
  local fields = entry_fields(KEYS[1], ARGV[3])
  local err = ARGV[8]
  if err == '' then
    err = meta_of(fields, 'rq:err')
  end
  local first = ARGV[10]
  if first == '' then
    first = false
  end
  local meta = {'rq:id', ARGV[5], 'rq:enq', ARGV[9], 'rq:att', ARGV[6], 'rq:first', first, 'rq:err', err}
  if how == 'dead' then
    meta[#meta + 1] = 'rq:src'
    meta[#meta + 1] = ARGV[3]
    meta[#meta + 1] = 'rq:died'
    meta[#meta + 1] = tostring(delayqNow())
    redis.call('xadd', KEYS[4], '*', unpack(with_meta(fields, meta)))
  else
    local delay = tonumber(ARGV[7])
    if delay > 0 then
      redis.call('zadd', KEYS[2], delayqNow() + delay, ARGV[5])
      redis.call('hset', KEYS[3], ARGV[5], pack_fields(with_meta(fields, meta)))
    else
      redis.call('xadd', KEYS[1], '*', unpack(with_meta(fields, meta)))
    end
  end
end
redis.call('xack', KEYS[1], ARGV[1], ARGV[3])
redis.call('xdel', KEYS[1], ARGV[3])
return 1
