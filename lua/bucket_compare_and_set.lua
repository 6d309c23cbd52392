-- bucket_compare_and_set: replace a Bucket's value when its stored bytes
-- equal the expected encoded value (Redisson's RBucket.compareAndSet). Like
-- Redisson's SET, the replacement has no expiry.
--
-- KEYS[1]  bucket: string, the encoded value
-- ARGV[1]  expected encoded value
-- ARGV[2]  new encoded value
--
-- Returns 1 when replaced, 0 when the bucket is missing or holds other bytes.
-- A key of another type is a WRONGTYPE error (from GET), left unchanged.
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('set', KEYS[1], ARGV[2])
    return 1
end
return 0
