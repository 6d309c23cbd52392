-- semaphore_delete: delete a Redisson-compatible semaphore, whatever type its
-- key holds, and this library's queue of its waiters.
--
-- KEYS[1]  semaphore
-- KEYS[2]  queue (redisson_sc_queue:{name})
-- KEYS[3]  waiters (redisson_sc_waiters:{name})
--
-- Returns 1 when the semaphore existed, 0 otherwise.
local n = redis.call('del', KEYS[1])
redis.call('del', KEYS[2], KEYS[3])
return n
