-- prelude_list: what the List scripts and the queues' hand-over scripts
-- share (never run alone).
--
-- push_all(cmd, key, items) puts items back onto the list key in their
-- order: at the tail with cmd 'rpush', at the head with 'lpush' (pushed
-- from the last to the first). It pushes 1000 at a time: unpack has a
-- limit on the number of arguments.
local function push_all(cmd, key, items)
  local n = #items
  local chunk = {}
  for k = 1, n do
    local j = k
    if cmd == 'lpush' then j = n - k + 1 end
    chunk[#chunk + 1] = items[j]
    if #chunk == 1000 or k == n then
      redis.call(cmd, key, unpack(chunk))
      chunk = {}
    end
  end
end

-- queue_put_back(inflight, queue, items) puts the elements of an in-flight
-- list back where they came from, in their order: at the head for every
-- list but a tail taker's (its name ends in ":last"), whose elements were
-- taken from the tail, the first taken first, and go back to the tail so
-- that the first taken is the tail again.
local function queue_put_back(inflight, queue, items)
  if string.sub(inflight, -5) ~= ':last' then
    push_all('lpush', queue, items)
    return
  end
  local rev = {}
  for k = #items, 1, -1 do
    rev[#rev + 1] = items[k]
  end
  push_all('rpush', queue, rev)
end
