package redisson

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// The reads of a ListMultimap or SetMultimap over its whole index, and
// Delete.

// ContainsKey reports whether key has values (one HEXISTS). It returns
// ErrNilValue for a nil pointer key, ErrCodec when it does not encode;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (m *multimapCore[K, V]) ContainsKey(ctx context.Context, key K) (_ bool, err error) {
	ctx, rec, err := m.open(ctx, opMultimapContainsKey)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	enc, _, _, err := m.key(key)
	if err != nil {
		return false, err
	}
	m.c.trip(ctx, 1)
	ok, err := m.c.rdb.HExists(ctx, m.name, enc).Result()
	return ok, m.wrap(err)
}

// ContainsEntry reports whether v is among key's values (one LPOS or
// SISMEMBER). It returns the errors of ContainsKey, and ErrNilValue or
// ErrCodec for v too.
func (m *multimapCore[K, V]) ContainsEntry(ctx context.Context, key K, v V) (_ bool, err error) {
	ctx, rec, err := m.open(ctx, opMultimapContainsEntry)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	_, _, values, err := m.key(key)
	if err != nil {
		return false, err
	}
	b, err := m.encode(v)
	if err != nil {
		return false, err
	}
	m.c.trip(ctx, 1)
	if m.mode == "set" {
		ok, err := m.c.rdb.SIsMember(ctx, values, b).Result()
		return ok, m.wrap(err)
	}
	_, err = m.c.rdb.LPos(ctx, values, string(b), redis.LPosArgs{}).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, m.wrap(err)
}

// Size returns the number of values of every key together, in one script
// (Redisson's size). It returns ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (m *multimapCore[K, V]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := m.open(ctx, opMultimapSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	r, err := m.run(ctx, scriptMultimapSize, []string{m.name}, m.prefix)
	n, _ := r.(int64)
	return n, err
}

// KeySize returns the number of keys (one HLEN, Redisson's
// keySet().size()). It returns the errors of Size.
func (m *multimapCore[K, V]) KeySize(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := m.open(ctx, opMultimapKeySize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	m.c.trip(ctx, 1)
	n, err := m.c.rdb.HLen(ctx, m.name).Result()
	return n, m.wrap(err)
}

// KeySet returns every key, in no particular order (one HKEYS, Redisson's
// readAllKeySet). It returns ErrCodec when a key does not decode, and the
// errors of Size.
func (m *multimapCore[K, V]) KeySet(ctx context.Context) (_ []K, err error) {
	ctx, rec, err := m.open(ctx, opMultimapKeySet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	m.c.trip(ctx, 1)
	ss, err := m.c.rdb.HKeys(ctx, m.name).Result()
	if err != nil {
		return nil, m.wrap(err)
	}
	out := make([]K, len(ss))
	for i, s := range ss {
		if out[i], err = m.decodeKey(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Entries returns every key with its values, read at once in one script
// (Redisson's entries): a ListMultimap's values in insertion order. It
// returns ErrCodec when a key or value does not decode (or a key decodes
// to something that cannot be a Go map key), and the errors of Size.
func (m *multimapCore[K, V]) Entries(ctx context.Context) (_ map[K][]V, err error) {
	ctx, rec, err := m.open(ctx, opMultimapEntries)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	r, err := m.run(ctx, scriptMultimapEntries, []string{m.name}, m.prefix)
	if err != nil {
		return nil, err
	}
	a, ok := r.([]any)
	if !ok || len(a)%2 != 0 {
		return nil, m.errorf("%w: reply %T", ErrUnexpectedReply, r)
	}
	out := make(map[K][]V, len(a)/2)
	for i := 0; i < len(a); i += 2 {
		s, ok := a[i].(string)
		if !ok {
			return nil, m.errorf("%w: key %T", ErrUnexpectedReply, a[i])
		}
		k, err := m.decodeKey(s)
		if err != nil {
			return nil, err
		}
		vs, err := m.decodeValues(a[i+1])
		if err != nil {
			return nil, err
		}
		out[k] = vs
	}
	return out, nil
}

// Delete deletes the multimap, its index and every key's values, in one
// script (Redisson's delete), and reports whether anything existed. An
// index holding another Redis type is deleted as it is. It returns
// ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis error.
func (m *multimapCore[K, V]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := m.open(ctx, opMultimapDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	r, err := m.run(ctx, scriptMultimapDelete, []string{m.name}, m.prefix)
	n, _ := r.(int64)
	return n > 0, err
}
