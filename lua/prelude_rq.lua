-- prelude_rq: what the ReliableQueue scripts share (never run alone).
--
-- Its scripts also join prelude_delayq, for delayqNow (the server's clock
-- in ms) and delayqWrongType (the WRONGTYPE check of a key).
--
-- A job is a stream entry: its payload field (the codec-encoded name
-- "payload", as a Java RStream producer writes it) and, when this library
-- wrote it again (a retry, a delayed job, a requeued dead letter), plain
-- metadata fields whose names start with "rq:" (docs/keys.md).
--
-- lease_state(stream, group, consumer, id, deliveries) tells whether the
-- entry id is pending for consumer in the delivery a worker holds (its
-- delivery count is deliveries; nil or '': any): 1 yes; 0 pending for
-- another consumer or in a later delivery (the lease ended and the entry
-- was taken over, by this consumer too), or not pending while the entry
-- still exists (acked by another); 2 neither pending nor in the stream:
-- settled already (the first run of a call go-redis resent) or deleted.
local function lease_state(stream, group, consumer, id, deliveries)
  local p = redis.call('xpending', stream, group, id, id, 1)
  if #p == 1 then
    if p[1][2] ~= consumer then
      return 0
    end
    if deliveries and deliveries ~= '' and tonumber(p[1][4]) ~= tonumber(deliveries) then
      return 0
    end
    return 1
  end
  if #redis.call('xrange', stream, id, id) == 0 then
    return 2
  end
  return 0
end

-- entry_fields returns the fields of entry id of stream ({} when gone).
local function entry_fields(stream, id)
  local e = redis.call('xrange', stream, id, id)
  if #e == 0 then
    return {}
  end
  return e[1][2]
end

-- with_meta returns fields without their "rq:" metadata, followed by the
-- name/value pairs of meta (a flat list; a false value is left out).
local function with_meta(fields, meta)
  local out = {}
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 3) ~= 'rq:' then
      out[#out + 1] = fields[i]
      out[#out + 1] = fields[i + 1]
    end
  end
  for i = 1, #meta, 2 do
    if meta[i + 1] then
      out[#out + 1] = meta[i]
      out[#out + 1] = meta[i + 1]
    end
  end
  return out
end

-- meta_of returns the value of metadata field name in fields, or false.
local function meta_of(fields, name)
  for i = 1, #fields, 2 do
    if fields[i] == name then
      return fields[i + 1]
    end
  end
  return false
end

-- pack_fields packs a flat list of strings as one string, each item as
-- <length>:<bytes> (binary-safe; a delayed job's body in its hash).
local function pack_fields(fields)
  local parts = {}
  for i = 1, #fields do
    parts[i] = #fields[i] .. ':' .. fields[i]
  end
  return table.concat(parts)
end

-- unpack_fields is the inverse of pack_fields.
local function unpack_fields(s)
  local out, pos = {}, 1
  while pos <= #s do
    local colon = string.find(s, ':', pos, true)
    local n = tonumber(string.sub(s, pos, colon - 1))
    out[#out + 1] = string.sub(s, colon + 1, colon + n)
    pos = colon + n + 1
  end
  return out
end
