-- idem_finish: store the response of a run (or forget the run), and wake
-- the requests waiting for it.
--
-- KEYS[1]  the record (hash: state, fp, owner, status, headers, body)
-- KEYS[2]  the record's channel
-- ARGV[1]  the running caller's token
-- ARGV[2]  '1' to store the response, '0' to delete the record
-- ARGV[3]  status
-- ARGV[4]  headers (opaque bytes)
-- ARGV[5]  body
-- ARGV[6]  retention in ms
-- ARGV[7]  publish command ('publish' or 'spublish')
--
-- Only the owner of the record finishes it: returns 0 when the record is
-- gone (its lease ran out) or another caller's. Storing again what this
-- owner stored (a resend) rewrites the same values. Returns 1 otherwise,
-- after publishing 'done' on KEYS[2].
if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] then
    return 0
end
if ARGV[2] == '1' then
    redis.call('hset', KEYS[1], 'state', 'done', 'status', ARGV[3], 'headers', ARGV[4], 'body', ARGV[5])
    redis.call('pexpire', KEYS[1], ARGV[6])
else
    redis.call('del', KEYS[1])
end
redis.call(ARGV[7], KEYS[2], 'done')
return 1
