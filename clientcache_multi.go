package redisson

import (
	"context"
	"time"

	"github.com/goredisson/redisson/internal/tracking"
)

// The multi-value reads of client-side caching: Map.GetAll (fields of one
// hash) and Buckets.Get (string keys, grouped by slot on Cluster). Each
// value is served, read and stored exactly as a single cached Get's: a hit
// is served from memory, and the misses are read in one call (one per slot
// group, pipelined), each under its own guard begun before the call.

// cachedFields reads the map o's fields through tc and calls put(i, v) for
// each field i present: the hits from the cache, the misses with one
// cached_get_fields call whose values and absences are cached (each when
// nothing invalidated the hash meanwhile, until its expiry in Redis at the
// latest). A field whose value does not decode fails the call, and no
// value read after it is cached.
func cachedFields[V any](ctx context.Context, o *base, tc *tracking.Cache, fields []string, put func(i int, v V)) error {
	var miss []int
	for i, f := range fields {
		if v, ok, hit := cached[V](tc, o.name, f); hit {
			if ok {
				put(i, v)
			}
			continue
		}
		miss = append(miss, i)
	}
	if len(miss) == 0 {
		return nil
	}
	loads := make([]tracking.Load, len(miss))
	args := make([]any, len(miss))
	for j, i := range miss {
		loads[j] = tc.Begin(o.name, fields[i])
		args[j] = fields[i]
	}
	start := time.Now()
	o.c.trip(ctx, 1)
	reply, err := o.c.scripts.run(ctx, scriptCachedGetFields, []string{o.name}, args...).Slice()
	if err == nil && len(reply) != len(miss)+1 {
		err = o.errorf("%w: cached_get_fields replied %d values for %d fields", ErrUnexpectedReply, len(reply), len(miss))
	}
	if err != nil {
		storeNone(loads)
		return o.wrap(err)
	}
	pttl, _ := reply[len(miss)].(int64)
	until := expiresAt(start, pttl)
	for j, i := range miss {
		v, ok, err := decodeReply[V](o, reply[j], nil)
		if err != nil {
			storeNone(loads[j:])
			return err
		}
		loads[j].StoreUntil(&cacheEntry[V]{v: v, ok: ok}, true, until)
		if ok {
			put(i, v)
		}
	}
	return nil
}

// storeNone ends loads without storing anything.
func storeNone(loads []tracking.Load) {
	for _, l := range loads {
		l.Store(nil, false)
	}
}

// cachedKeys is Buckets.Get through tc: the names (checked) it
// holds are put in out from the cache, the others read with one
// cached_get_keys call per slot group (pipelined when several) and cached,
// sharing their entries with the cached Buckets of type T. A name holding
// another Redis type is left out of out, as MGET answers it, and not
// cached.
func cachedKeys[T any](ctx context.Context, b *Buckets[T], tc *tracking.Cache, names []string, out map[string]T) error {
	var miss []string
	for _, n := range names {
		if v, ok, hit := cached[T](tc, n, ""); hit {
			if ok {
				out[n] = v
			}
			continue
		}
		miss = append(miss, n)
	}
	if len(miss) == 0 {
		return nil
	}
	groups := b.groups(miss)
	loads := make([][]tracking.Load, len(groups))
	calls := make([]*call, len(groups))
	for i, g := range groups {
		loads[i] = make([]tracking.Load, len(g))
		for j, n := range g {
			loads[i][j] = tc.Begin(n, "")
		}
		calls[i] = &call{s: scriptCachedGetKeys, keys: g}
	}
	start := time.Now()
	var err error
	b.c.trip(ctx, 1)
	if len(calls) == 1 {
		calls[0].cmd = b.c.scripts.run(ctx, scriptCachedGetKeys, groups[0])
	} else {
		err = b.c.scripts.runPipelined(ctx, calls)
	}
	err = objectErr(bucketsKind, "", err)
	for i, g := range groups {
		if err == nil {
			err = b.storeKeys(calls[i], g, loads[i], start, out)
		} else {
			storeNone(loads[i])
		}
	}
	return err
}

// storeKeys decodes one cached_get_keys reply for the names g, caching
// each value under its load and putting the present ones in out. On an
// error, the loads not yet ended store nothing.
func (b *Buckets[T]) storeKeys(cl *call, g []string, loads []tracking.Load, start time.Time, out map[string]T) error {
	reply, err := cl.cmd.Slice()
	if err == nil && len(reply) != 2*len(g) {
		err = objectErrorf(bucketsKind, g[0], "%w: cached_get_keys replied %d values for %d keys", ErrUnexpectedReply, len(reply), len(g))
	}
	if err != nil {
		storeNone(loads)
		return objectErr(bucketsKind, g[0], err)
	}
	for j, n := range g {
		pttl, _ := reply[2*j+1].(int64)
		s, ok := reply[2*j].(string)
		if pttl == -3 || (!ok && reply[2*j] != nil) { // another type: missing, not cached
			loads[j].Store(nil, false)
			continue
		}
		var v T
		if ok {
			if v, err = decodeValue[T](b.codec, bucketObject(n), []byte(s)); err != nil {
				storeNone(loads[j:])
				return err
			}
			out[n] = v
		}
		loads[j].StoreUntil(&cacheEntry[T]{v: v, ok: ok}, true, expiresAt(start, pttl))
	}
	return nil
}
