-- prelude_list: what the List scripts share (never run alone).
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
