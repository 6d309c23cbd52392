-- idem_begin: decide whether a request with an idempotency key runs, is
-- answered with the stored response, or must wait.
--
-- KEYS[1]  the record (hash: state, fp, owner, status, headers, body)
-- ARGV[1]  the request's fingerprint
-- ARGV[2]  the caller's token (a fresh owner field per call)
-- ARGV[3]  the lease in ms
--
-- No record: creates it (state 'running', fp, owner) with the lease as its
-- TTL and returns {1} (run). A record of another fingerprint: {3}. A
-- stored response: {2, status, headers, body}. A running record owned by
-- ARGV[2] (a resend of this call whose reply was lost): {1}. A running
-- record of another owner: {0, its remaining TTL in ms}.
local state = redis.call('hget', KEYS[1], 'state')
if not state then
    redis.call('hset', KEYS[1], 'state', 'running', 'fp', ARGV[1], 'owner', ARGV[2])
    redis.call('pexpire', KEYS[1], ARGV[3])
    return {1}
end
if redis.call('hget', KEYS[1], 'fp') ~= ARGV[1] then
    return {3}
end
if state == 'done' then
    local r = redis.call('hmget', KEYS[1], 'status', 'headers', 'body')
    return {2, r[1], r[2], r[3]}
end
if redis.call('hget', KEYS[1], 'owner') == ARGV[2] then
    return {1}
end
return {0, redis.call('pttl', KEYS[1])}
