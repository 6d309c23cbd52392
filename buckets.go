package redisson

import (
	"context"
	"errors"
	"sort"
	"strconv"

	"github.com/redis/go-redis/v9"
)

const bucketsKind = "buckets"

// Buckets reads and writes many Buckets of type T at once, wire-compatible
// with Redisson's RBuckets: each name is a plain string key holding the
// value encoded with the codec, exactly what a Bucket (and Redisson's
// RBucket) stores. Get is MGET, Set MSET, TrySet MSETNX, as Redisson sends
// them.
//
// On Redis Cluster the names are grouped by hash slot: Get and Set send one
// MGET or MSET per slot group, all in one pipeline (one round trip per
// node); a Set over several slots is then not atomic (each slot group is).
// TrySet is all-or-nothing only within one slot: over several it is
// ErrCrossSlot and sends nothing (name the buckets with one {hash tag}).
//
// A Buckets is safe for concurrent use and holds no state of its own; it may
// be copied.
type Buckets[T any] struct {
	c      *Client
	codec  Codec
	object string // as codec errors name it
	cached bool   // WithClientSideCaching
}

// GetBuckets returns the many-bucket view of the client, holding values of
// type T. It does no I/O. opts may give it its own codec (WithCodec); a nil
// option or a nil codec keeps the client's default; WithClientSideCaching
// serves Get from a cache Redis keeps fresh, sharing its entries with the
// cached Buckets of type T (see its guarantees).
func GetBuckets[T any](c *Client, opts ...ObjectOption) *Buckets[T] {
	return &Buckets[T]{c: c, codec: c.objectCodec(opts), object: bucketsKind, cached: objectOptionsOf(opts).sideCache}
}

// write marks a write of names for the client-side cache, if the buckets
// have one; the returned function ends it.
func (b *Buckets[T]) write(names [][]string) func() {
	if !b.cached {
		return func() {}
	}
	var all []string
	for _, g := range names {
		all = append(all, g...)
	}
	return cacheWriteKeys(b.c.clientCache(), all)
}

// Codec returns the codec the buckets encode their values with.
func (b *Buckets[T]) Codec() Codec { return b.codec }

// check refuses an empty name and a closed client before anything is sent.
func (b *Buckets[T]) check(names []string) error {
	for _, n := range names {
		if n == "" {
			return objectErrorf(bucketsKind, "", "%w", ErrEmptyName)
		}
	}
	return b.c.checkObject("buckets", nil)
}

// Get returns the value of every name that exists (missing names are left
// out of the map, as in Redisson; so is a name holding another Redis type,
// which MGET answers as missing). It returns ErrCodec when a stored value
// does not decode into T; ErrEmptyName for an empty name, ErrClientClosed,
// or a Redis error. No names is an empty map and no I/O.
//
// With WithClientSideCaching, the names cached are served from memory and
// the others read with one call (one per slot group on Cluster, pipelined)
// and cached, each value as a cached Bucket's Get serves it; the values
// are then not one snapshot of the keys, as MGET's are on one node.
func (b *Buckets[T]) Get(ctx context.Context, names ...string) (_ map[string]T, err error) {
	ctx, rec := b.c.begin(ctx, bucketsKind, "", opBucketsGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := b.check(names); err != nil {
		return nil, err
	}
	out := make(map[string]T, len(names))
	if len(names) == 0 {
		return out, nil
	}
	if b.cached {
		if tc := b.c.clientCache(); tc != nil {
			if err := cachedKeys(ctx, b, tc, names, out); err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	groups := b.groups(names)
	cmds := make([]*redis.SliceCmd, len(groups))
	err = b.send(ctx, len(groups), func(p redis.Cmdable) {
		for i, g := range groups {
			cmds[i] = p.MGet(ctx, g...)
		}
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, objectErr(bucketsKind, "", err)
	}
	for i, g := range groups {
		vals, err := cmds[i].Result()
		if err != nil {
			return nil, objectErr(bucketsKind, g[0], err)
		}
		for j, v := range vals {
			s, ok := v.(string)
			if !ok { // nil: missing (MGET answers nil for another type too)
				continue
			}
			x, err := decodeValue[T](b.codec, bucketObject(g[j]), []byte(s))
			if err != nil {
				return nil, err
			}
			out[g[j]] = x
		}
	}
	return out, nil
}

// Set stores every value of values under its name, with no expiry (an
// expiry a key had is removed, as MSET does). It returns ErrNilValue for a
// nil pointer or interface, ErrCodec when a value does not encode (nothing
// is sent then); ErrEmptyName, ErrClientClosed, or a Redis error otherwise.
// An empty map sends nothing.
func (b *Buckets[T]) Set(ctx context.Context, values map[string]T) (err error) {
	ctx, rec := b.c.begin(ctx, bucketsKind, "", opBucketsSet)
	defer func() { rec.end(err, OutcomeOK) }()
	groups, args, err := b.encode(values)
	if err != nil || len(groups) == 0 {
		return err
	}
	defer b.write(groups)()
	cmds := make([]*redis.StatusCmd, len(args))
	err = b.send(ctx, len(groups), func(p redis.Cmdable) {
		for i, a := range args {
			cmds[i] = p.MSet(ctx, a...)
		}
	})
	for _, cmd := range cmds {
		if err == nil {
			err = cmd.Err()
		}
	}
	return objectErr(bucketsKind, "", err)
}

// TrySet stores every value of values only if none of the names exists
// (MSETNX), and reports whether it did: all or nothing. On Redis Cluster
// the names must share one hash slot, or the call is ErrCrossSlot and sends
// nothing. It returns the errors of Set too. An empty map is (false, nil)
// and sends nothing.
func (b *Buckets[T]) TrySet(ctx context.Context, values map[string]T) (_ bool, err error) {
	ctx, rec := b.c.begin(ctx, bucketsKind, "", opBucketsTrySet)
	defer func() { rec.end(err, OutcomeOK) }()
	groups, args, err := b.encode(values)
	if err != nil || len(groups) == 0 {
		return false, err
	}
	if len(groups) > 1 {
		return false, objectErrorf(bucketsKind, "", "%w: %q and %q (name the buckets with one {hash tag})",
			ErrCrossSlot, groups[0][0], groups[1][0])
	}
	defer b.write(groups)()
	b.c.trip(ctx, 1)
	ok, err := b.c.rdb.MSetNX(ctx, args[0]...).Result()
	return ok, objectErr(bucketsKind, "", err)
}

// encode checks and encodes values, grouped by slot: the names of each
// group and its MSET arguments (name, value, ...).
func (b *Buckets[T]) encode(values map[string]T) ([][]string, [][]any, error) {
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	if err := b.check(names); err != nil {
		return nil, nil, err
	}
	groups := b.groups(names)
	args := make([][]any, len(groups))
	for i, g := range groups {
		args[i] = make([]any, 0, 2*len(g))
		for _, n := range g {
			data, err := encodeNonNil(b.codec, bucketObject(n), values[n])
			if err != nil {
				return nil, nil, err
			}
			args[i] = append(args[i], n, data)
		}
	}
	return groups, args, nil
}

// groups splits names by hash slot (one group off Cluster), in a stable
// order: groups by slot, names within a group as given (sorted for maps).
func (b *Buckets[T]) groups(names []string) [][]string {
	if !b.c.topo.isCluster() {
		sorted := append([]string(nil), names...)
		sort.Strings(sorted)
		return [][]string{sorted}
	}
	bySlot := map[int][]string{}
	for _, n := range names {
		s := hashSlot(n)
		bySlot[s] = append(bySlot[s], n)
	}
	slots := make([]int, 0, len(bySlot))
	for s := range bySlot {
		slots = append(slots, s)
	}
	sort.Ints(slots)
	out := make([][]string, len(slots))
	for i, s := range slots {
		out[i] = bySlot[s]
		sort.Strings(out[i])
	}
	return out
}

// send runs queue's commands: one command alone, several in one pipeline
// (go-redis's Cluster pipeline sends one per node, in parallel).
func (b *Buckets[T]) send(ctx context.Context, n int, queue func(p redis.Cmdable)) error {
	b.c.trip(ctx, 1)
	if n == 1 {
		queue(b.c.rdb)
		return nil // the command's own error is read from it
	}
	_, err := b.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		queue(p)
		return nil
	})
	return err
}

// bucketObject is how codec errors name the bucket called name.
func bucketObject(name string) string { return bucketKind + " " + strconv.Quote(name) }
