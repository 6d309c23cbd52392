-- adder_flush: move one adder instance's local part into the adder's
-- flushed part (the Go-only flushed mode), once per call.
--
-- KEYS[1]  flushed part: {name}:adder-flushed (string, decimal)
-- KEYS[2]  call marker: redisson_adder_call:{name}:<client uuid>:<n>
-- ARGV[1]  'incrby' or 'incrbyfloat'
-- ARGV[2]  the part (decimal text)
-- ARGV[3]  call marker lifetime in ms (the retry window)
--
-- Returns 1. A call resent after a lost reply finds its marker and adds
-- nothing again.
if redis.call('exists', KEYS[2]) == 1 then
    return 1
end
redis.call(ARGV[1], KEYS[1], ARGV[2])
redis.call('set', KEYS[2], '1', 'px', ARGV[3])
return 1
