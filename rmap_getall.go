package redisson

import (
	"context"
	"fmt"
	"reflect"
)

// GetAll returns the entries of keys that are present (absent keys are
// left out, as in Redisson's RMap.getAll), read with one HMGET. No keys is
// an empty map and no I/O. It returns ErrNilValue for a nil pointer key,
// ErrCodec when a key does not encode or is not comparable (an any key
// holding a slice) or a stored value does not decode; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error
// otherwise.
//
// With WithClientSideCaching, the keys cached are served from memory and
// the others read with one call and cached, each value as a cached Get
// serves it; the values are then not one snapshot of the hash, as HMGET's
// are.
func (m *Map[K, V]) GetAll(ctx context.Context, keys ...K) (_ map[K]V, err error) {
	ctx, rec, err := m.open(ctx, opMapGetAll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	fields := make([]string, len(keys))
	isIface := reflect.TypeFor[K]().Kind() == reflect.Interface
	for i, key := range keys {
		if isIface && !reflect.ValueOf(&key).Elem().Comparable() {
			return nil, &codecError{object: m.object, codec: m.codec.Name(), op: "encode",
				err: fmt.Errorf("key %v is not comparable", key)}
		}
		k, err := m.encodeKey(key)
		if err != nil {
			return nil, err
		}
		fields[i] = string(k)
	}
	out := make(map[K]V, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	if m.cached {
		if tc := m.c.clientCache(); tc != nil {
			if err := cachedFields(ctx, &m.base, tc, fields, func(i int, v V) { out[keys[i]] = v }); err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	m.c.trip(ctx, 1)
	vals, err := m.c.rdb.HMGet(ctx, m.name, fields...).Result()
	if err != nil {
		return nil, m.wrap(err)
	}
	for i, raw := range vals {
		v, ok, err := m.value(raw, nil)
		if err != nil {
			return nil, err
		}
		if ok {
			out[keys[i]] = v
		}
	}
	return out, nil
}
