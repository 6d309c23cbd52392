-- election_announce: make a candidate that holds the election's lock the
-- leader of record, and tell the observers.
--
-- KEYS[1]  the election's lock hash (a Redisson RLock: field <owner> -> hold
--          count)
-- KEYS[2]  the leader record (hash: owner, term, value)
-- KEYS[3]  the election's channel (redisson_election__channel:{name})
-- ARGV[1]  the candidate's owner field in the lock hash
-- ARGV[2]  the term: the fencing token of the candidate's acquisition
-- ARGV[3]  the candidate's value
-- ARGV[4]  publish command ('publish' or 'spublish')
--
-- Returns {1, sec, usec} (the server clock when the record was written) when
-- the candidate still holds the lock; {0} and writes nothing when it does not
-- (its lease ran out before this call). The message is "<term> <value>".
-- Running it again (a resend after a lost reply) writes the same record.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    return {0}
end
redis.call('hset', KEYS[2], 'owner', ARGV[1], 'term', ARGV[2], 'value', ARGV[3])
redis.call(ARGV[4], KEYS[3], ARGV[2] .. ' ' .. ARGV[3])
local t = redis.call('time')
return {1, tonumber(t[1]), tonumber(t[2])}
