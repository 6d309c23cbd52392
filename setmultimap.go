package redisson

const setMultimapKind = "set multimap"

// SetMultimap maps each key of type K to a set of values of type V,
// wire-compatible with Redisson's RSetMultimap: Java and Go clients of one
// name see one multimap.
//
// Keys (docs/keys.md), all in the slot of {name}, so it works on Redis
// Cluster: the index, a hash at name from each encoded key to its id (the
// 22-character Base64 of the key's 128-bit HighwayHash, as Redisson
// computes it), and for each key a set at {name}:<id> of its encoded
// values. Two values are the same when they encode to the same bytes. A key
// leaves the index with its last value. None gets a Redis TTL.
//
// Complexity: Put, PutAll, Remove, ContainsEntry, ContainsKey and KeySize
// are one round trip, O(1) per value; Get O(values of the key); Size,
// Entries and Delete O(keys + values) in one script.
//
// Guarantees: every call is one atomic command or script on the master of
// the name's slot; a failover may lose the writes the old master had not
// replicated, as for any Redis data. Nil pointers are ErrNilValue; a key or
// value that does not decode is ErrCodec naming the multimap and the codec;
// a key holding another Redis type is ErrWrongType and every write leaves
// it unchanged.
//
// A SetMultimap is safe for concurrent use and holds no state of its own.
type SetMultimap[K comparable, V any] struct {
	multimapCore[K, V]
}

// GetSetMultimap returns the set multimap called name, from keys of type K
// to sets of values of type V. It does no I/O. opts may give it its own
// codec (WithCodec), as for GetMap. An empty name makes every method return
// ErrEmptyName.
func GetSetMultimap[K comparable, V any](c *Client, name string, opts ...ObjectOption) *SetMultimap[K, V] {
	return &SetMultimap[K, V]{newMultimap[K, V](c, setMultimapKind, "set", name, opts)}
}
