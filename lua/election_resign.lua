-- election_resign: drop the leader record of a candidate that resigned.
--
-- KEYS[1]  the leader record (hash: owner, term, value)
-- KEYS[2]  the election's channel
-- ARGV[1]  the resigning candidate's owner field
-- ARGV[2]  publish command ('publish' or 'spublish')
--
-- Deletes the record and publishes the empty message (no leader) only when
-- the record is still the candidate's: a successor's record is left alone.
-- Returns 1 when it deleted the record, 0 otherwise.
if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] then
    return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], '')
return 1
