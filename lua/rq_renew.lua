-- rq_renew: renew the leases of ReliableQueue jobs in flight, a batch of
-- them (the client's watchdog sends it, as it renews locks): a job still
-- pending for its consumer has its idle time reset (XCLAIM ... JUSTID to
-- the same consumer, which leaves its delivery count alone).
-- prelude: rq
--
-- KEYS[i]  queue of job i: stream
-- ARGV[1]  the lease in ms (unused: a job's lease is its idle time)
-- ARGV[2+4(i-1)..]  job i: consumer group, consumer, entry id, its delivery
--                    count in the delivery held (a later delivery of the
--                    entry to the same consumer is not renewed for it)
--
-- Returns one integer per job: 1 renewed, 0 the lease is lost (the job is
-- pending for another consumer or in a later delivery, or settled).
local out = {}
for i = 1, #KEYS do
  local g, c, id, n = ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i], ARGV[4 * i + 1]
  if lease_state(KEYS[i], g, c, id, n) == 1 then
    redis.call('xclaim', KEYS[i], g, c, 0, id, 'justid')
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
