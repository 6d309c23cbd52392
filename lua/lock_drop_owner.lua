-- lock_drop_owner: remove one owner's holds from a lock, whatever their count.
-- The watchdog uses it when a renewal it had given up on (and reported as a
-- lost lease) reached Redis after all, so that the hold it no longer tracks
-- does not block other owners until its lease runs out.
--
-- KEYS[1]  lock hash
-- KEYS[2]  unlock channel
-- ARGV[1]  owner field
-- ARGV[2]  publish command: 'publish' or 'spublish'
--
-- Returns 1 when the owner's field was removed, 0 when it was not there.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    return 0
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('exists', KEYS[1]) == 0 then
    redis.call(ARGV[2], KEYS[2], 0)
end
return 1
