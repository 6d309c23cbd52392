package redisson

import (
	"context"
	"fmt"
	"strconv"
)

// MapCache's iterator and the decoding of the script replies that list
// entries.

// pairs turns a script's {key, entry, ...} reply into field, encoded value
// pairs (headers stripped).
func (mc *MapCache[K, V]) pairs(r []any) ([]string, error) {
	kv := make([]string, len(r))
	for i, x := range r {
		s, ok := x.(string)
		if !ok {
			return nil, mc.unexpected(x)
		}
		if i%2 == 1 {
			raw, ok := mapCacheValue([]byte(s))
			if !ok {
				return nil, &codecError{object: mc.m.object, codec: mc.m.codec.Name(), op: "decode",
					err: fmt.Errorf("entry of %d bytes is shorter than its header says", len(s))}
			}
			s = string(raw)
		}
		kv[i] = s
	}
	return kv, nil
}

// Iterator returns an iterator over the live entries, read with HSCAN about
// batch entries per round trip and filtered against the server's clock in
// the same script, so that an expired entry is never yielded. Iterating is
// not an access (idle deadlines do not move). Otherwise it behaves as
// Map.Iterator: an entry live for the whole iteration is yielded at least
// once; a batch below 1 makes Err return ErrInvalidBatch.
func (mc *MapCache[K, V]) Iterator(batch int) *MapIterator[K, V] {
	return &MapIterator[K, V]{m: mc.m, batch: batch, page: func(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
		r, err := mc.run(ctx, scriptMapCacheScan, strconv.FormatUint(cursor, 10), count).Slice()
		if err != nil {
			return nil, 0, mc.m.wrap(err)
		}
		if len(r) != 2 {
			return nil, 0, mc.unexpected(r)
		}
		cur, _ := r[0].(string)
		next, err := strconv.ParseUint(cur, 10, 64)
		if err != nil {
			return nil, 0, mc.unexpected(r[0])
		}
		page, _ := r[1].([]any)
		kv, err := mc.pairs(page)
		return kv, next, err
	}}
}
