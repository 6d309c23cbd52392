-- latch_delete: delete a Redisson-compatible count-down latch and, when
-- there was one, publish the new-count message 1 as Redisson does (waiters of
-- this library re-check on it and find the latch open).
--
-- KEYS[1]  latch (any type: deleted like Redisson's delete)
-- KEYS[2]  channel (redisson_countdownlatch__channel__{name}); absent on
--          Redis Cluster when it lies in another slot than KEYS[1], then
--          ARGV[2] names it
-- ARGV[1]  publish command: 'publish' (a plain PUBLISH reaches every node)
-- ARGV[2]  the channel when it is not KEYS[2]
--
-- Returns 1 when a latch was deleted, 0 otherwise.
if redis.call('del', KEYS[1]) == 1 then
    redis.call(ARGV[1], KEYS[2] or ARGV[2], 1)
    return 1
end
return 0
