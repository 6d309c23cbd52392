-- election_leader: read the leader of record, if it still leads.
--
-- KEYS[1]  the election's lock hash
-- KEYS[2]  the leader record (hash: owner, term, value)
--
-- Returns {term, value} when the record's owner still holds the lock; false
-- when there is no record, or its owner no longer holds the lock (it
-- resigned, or its lease ran out), or the lock is held by a candidate that
-- has not announced itself yet (or by a Redisson RLock client, which never
-- does).
local r = redis.call('hmget', KEYS[2], 'owner', 'term', 'value')
if not r[1] or redis.call('hexists', KEYS[1], r[1]) == 0 then
    return false
end
return {tonumber(r[2]), r[3]}
