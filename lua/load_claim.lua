-- load_claim: decide who loads a missing key of a read-through map
-- (ReadThrough on LocalCachedMap and MapCache): the key may have been
-- written meanwhile, its absence may be remembered, another instance may
-- be loading it, or the caller takes the load's lease.
--
-- KEYS[1]  the map's hash
-- KEYS[2]  {name}:load:<key hash>, the load's lease (string: the loader's token)
-- KEYS[3]  {name}:notfound:<key hash>, the remembered absence
-- KEYS[4]  MapCache only: redisson__timeout__set:{name}, the entries' expiries
-- ARGV[1]  encoded key (the hash field)
-- ARGV[2]  token of the caller
-- ARGV[3]  the lease's time, ms
--
-- Returns {1} when the field is present (and, for a MapCache, not expired
-- by its TTL): read it again; {2} when its absence is remembered; {3} when
-- the caller took the lease and must load; {4, pttl} when another instance
-- holds the lease, for pttl ms more at most.
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  if #KEYS < 4 then
    return {1}
  end
  local expiry = redis.call('zscore', KEYS[4], ARGV[1])
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if not expiry or tonumber(expiry) > now then
    return {1}
  end
end
if redis.call('exists', KEYS[3]) == 1 then
  return {2}
end
if redis.call('set', KEYS[2], ARGV[2], 'nx', 'px', ARGV[3]) then
  return {3}
end
return {4, redis.call('pttl', KEYS[2])}
