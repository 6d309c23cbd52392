-- semaphore_delete: delete a semaphore and its reservation.
--
-- KEYS[1]  semaphore (any type: deleted like Redisson's delete)
-- KEYS[2]  reservation hash (redisson_sc_reservation:{name})
--
-- Returns 1 when the semaphore existed, 0 otherwise.
local n = redis.call('del', KEYS[1])
redis.call('del', KEYS[2])
return n
