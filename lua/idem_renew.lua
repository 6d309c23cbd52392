-- idem_renew: extend the lease of a running record.
--
-- KEYS[1]  the record (hash: state, fp, owner, status, headers, body)
-- ARGV[1]  the running caller's token
-- ARGV[2]  the lease in ms
--
-- Returns 1 when the record is still running under ARGV[1] (its TTL is
-- then the lease from now), 0 otherwise.
if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] or redis.call('hget', KEYS[1], 'state') ~= 'running' then
    return 0
end
redis.call('pexpire', KEYS[1], ARGV[2])
return 1
