package redisson

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What ListMultimap and SetMultimap share: Redisson's layout (an index hash
// of encoded key -> id, the values of a key at {name}:<id>) and every call;
// the two differ only in the Redis type of the values (list or set), which
// the scripts take as their first argument.

// multimap is the body of a ListMultimap or SetMultimap; its methods are
// theirs.
type multimapCore[K comparable, V any] struct {
	base
	mode   string // "list" or "set": ARGV[1] of every script
	prefix string // {name}: the values keys' prefix
}

func newMultimap[K comparable, V any](c *Client, kind, mode, name string, opts []ObjectOption) multimapCore[K, V] {
	prefix := suffixName(name, "")
	b := newBase(c, kind, name, c.objectCodec(opts), prefix)
	b.opKind = strings.ReplaceAll(kind, " ", "_")
	return multimapCore[K, V]{base: b, mode: mode, prefix: prefix}
}

// Name returns the multimap's name, the Redis key of its index hash.
func (m *multimapCore[K, V]) Name() string { return m.name }

// Codec returns the codec the multimap encodes its keys and values with.
func (m *multimapCore[K, V]) Codec() Codec { return m.codec }

// multimapID is the id of an encoded key, as Redisson names its values
// key: the Base64 (standard alphabet, no padding) of its 128-bit
// HighwayHash, the two 64-bit halves big-endian.
func multimapID(encoded []byte) string {
	h := keyHash(encoded)
	return base64.RawStdEncoding.EncodeToString(h[:])
}

// key encodes key and returns it with its id and values key.
func (m *multimapCore[K, V]) key(key K) (enc, id, values string, err error) {
	b, err := m.encode(key)
	if err != nil {
		return "", "", "", err
	}
	id = multimapID(b)
	return string(b), id, m.prefix + id, nil
}

// values encodes vs as script or command arguments.
func (m *multimapCore[K, V]) values(vs []V) ([]any, error) {
	out := make([]any, len(vs))
	for i, v := range vs {
		b, err := m.encode(v)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}

// run runs a multimap script (one round trip) with the mode first.
func (m *multimapCore[K, V]) run(ctx context.Context, s *script, keys []string, args ...any) (any, error) {
	v, err := m.c.scripts.run(ctx, s, keys, append([]any{m.mode}, args...)...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, m.wrap(err)
}

// decodeValues decodes a reply's array of encoded values.
func (m *multimapCore[K, V]) decodeValues(r any) ([]V, error) {
	a, ok := r.([]any)
	if !ok {
		return nil, m.errorf("%w: reply %T", ErrUnexpectedReply, r)
	}
	out := make([]V, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			return nil, m.errorf("%w: element %T", ErrUnexpectedReply, e)
		}
		v, err := decodeValue[V](m.codec, m.object, []byte(s))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// decodeKey decodes a stored key, refusing one that cannot be a Go map key
// (a K holding an interface that decodes to a slice or a map).
func (m *multimapCore[K, V]) decodeKey(s string) (K, error) {
	k, err := decodeValue[K](m.codec, m.object, []byte(s))
	if err == nil && !reflect.ValueOf(&k).Elem().Comparable() {
		var zero K
		return zero, &codecError{object: m.object, codec: m.codec.Name(), op: "decode",
			err: fmt.Errorf("key %v is not comparable", k)}
	}
	return k, err
}

// Put adds v to key's values and reports whether it was added: always for
// a ListMultimap (duplicates are kept, in insertion order), when v was not
// among key's values for a SetMultimap. It is one round trip (Redisson's
// put). It returns ErrNilValue for a nil pointer key or value, ErrCodec when
// either does not encode; ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise.
func (m *multimapCore[K, V]) Put(ctx context.Context, key K, v V) (bool, error) {
	n, err := m.PutAll(ctx, key, v)
	return n > 0, err
}

// PutAll adds vs to key's values in one round trip (Redisson's putAll) and
// returns how many were added (all of them for a ListMultimap); no values is
// no call and 0. If one does not encode nothing is added. It returns the
// errors of Put.
func (m *multimapCore[K, V]) PutAll(ctx context.Context, key K, vs ...V) (_ int64, err error) {
	ctx, rec, err := m.open(ctx, opMultimapPut)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	enc, id, values, err := m.key(key)
	if err != nil {
		return 0, err
	}
	args, err := m.values(vs)
	if err != nil || len(args) == 0 {
		return 0, err
	}
	r, err := m.run(ctx, scriptMultimapPut, []string{m.name, values}, append([]any{enc, id}, args...)...)
	n, _ := r.(int64)
	return n, err
}

// Get returns key's values (none when key is absent) in one LRANGE or
// SMEMBERS (Redisson's get(key).readAll() and getAll(key)): a ListMultimap's
// in insertion order, a SetMultimap's in no particular order. It returns
// ErrCodec when a value does not decode, and the errors of Put.
func (m *multimapCore[K, V]) Get(ctx context.Context, key K) (_ []V, err error) {
	ctx, rec, err := m.open(ctx, opMultimapGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	_, _, values, err := m.key(key)
	if err != nil {
		return nil, err
	}
	m.c.trip(ctx, 1)
	var ss []string
	if m.mode == "list" {
		ss, err = m.c.rdb.LRange(ctx, values, 0, -1).Result()
	} else {
		ss, err = m.c.rdb.SMembers(ctx, values).Result()
	}
	if err != nil {
		return nil, m.wrap(err)
	}
	out := make([]V, len(ss))
	for i, s := range ss {
		if out[i], err = decodeValue[V](m.codec, m.object, []byte(s)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Remove removes one occurrence of v from key's values (the first, in a
// ListMultimap) and reports whether there was one; key leaves the multimap
// with its last value. It is one round trip (Redisson's remove(key, value)).
// It returns the errors of Put.
func (m *multimapCore[K, V]) Remove(ctx context.Context, key K, v V) (_ bool, err error) {
	ctx, rec, err := m.open(ctx, opMultimapRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	enc, _, values, err := m.key(key)
	if err != nil {
		return false, err
	}
	b, err := m.encode(v)
	if err != nil {
		return false, err
	}
	r, err := m.run(ctx, scriptMultimapRemove, []string{m.name, values}, enc, string(b))
	return r == int64(1), err
}

// RemoveAll removes key and returns the values it had (none when it was
// absent), in one round trip (Redisson's removeAll). It returns the errors
// of Get; when a removed value does not decode it is removed all the same.
func (m *multimapCore[K, V]) RemoveAll(ctx context.Context, key K) (_ []V, err error) {
	ctx, rec, err := m.open(ctx, opMultimapRemoveAll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	enc, _, values, err := m.key(key)
	if err != nil {
		return nil, err
	}
	r, err := m.run(ctx, scriptMultimapRemoveAll, []string{m.name, values}, enc)
	if err != nil {
		return nil, err
	}
	return m.decodeValues(r)
}

// ReplaceValues makes vs key's values and returns the ones it had, in one
// round trip (Redisson's replaceValues); no vs removes key. If one of vs
// does not encode nothing changes. It returns the errors of RemoveAll.
func (m *multimapCore[K, V]) ReplaceValues(ctx context.Context, key K, vs ...V) (_ []V, err error) {
	ctx, rec, err := m.open(ctx, opMultimapReplace)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	enc, id, values, err := m.key(key)
	if err != nil {
		return nil, err
	}
	args, err := m.values(vs)
	if err != nil {
		return nil, err
	}
	r, err := m.run(ctx, scriptMultimapReplace, []string{m.name, values}, append([]any{enc, id}, args...)...)
	if err != nil {
		return nil, err
	}
	return m.decodeValues(r)
}

// FastRemove removes keys with their values in one round trip and returns
// how many of them were present (Redisson's fastRemove); no keys is no call
// and 0. If one key does not encode nothing is removed. It returns the
// errors of Put.
func (m *multimapCore[K, V]) FastRemove(ctx context.Context, keys ...K) (_ int64, err error) {
	ctx, rec, err := m.open(ctx, opMultimapFastRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	rkeys := []string{m.name}
	args := make([]any, 0, len(keys))
	for _, k := range keys {
		enc, _, values, err := m.key(k)
		if err != nil {
			return 0, err
		}
		rkeys = append(rkeys, values)
		args = append(args, enc)
	}
	r, err := m.run(ctx, scriptMultimapFastRemove, rkeys, args...)
	n, _ := r.(int64)
	return n, err
}
