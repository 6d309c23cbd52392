package redisson

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ReadThrough makes a LocalCachedMap or a MapCache load the keys it misses
// (WithReadThrough). On a miss (the key absent in Redis), one instance in
// the whole deployment runs Load for the key while the others wait for its
// result: the loader takes a short-lived lease on the key in Redis,
// {name}:load:<key hash>, and publishes on {name}:load when it is done; the
// waiters, woken by that message, read the value it wrote to the map. A
// waiter whose lease holder neither finished nor gave up within LoadTimeout
// (a crashed process) takes the lease and loads itself. Within one process
// the callers of one key share one load and its result.
//
// A failed load caches nothing: its callers get the loader's error, and the
// next caller loads again. A loader that returns ErrKeyNotFound reports the
// key absent (Get returns false and no error); with NotFoundTTL every
// instance remembers that for NotFoundTTL. A load's result is written to the
// map only if the key is still absent (a value written meanwhile wins and
// is returned), so every instance sees it; the LocalCachedMap instances are
// told as for any write.
//
// Load is given a context that ends after LoadTimeout, when every caller
// waiting for the load has given up, or at Client.Close; a caller never
// waits past its own context, whatever the loader does. A loader must not
// keep running long after its context ended: Client.Close waits for it.
type ReadThrough[K comparable, V any] struct {
	// Load returns the value of key from the source of truth, or an error
	// that wraps ErrKeyNotFound when the source has none. Required.
	Load func(ctx context.Context, key K) (V, error)
	// LoadAll, when set, loads several keys at once for GetAll: the keys
	// absent from its result are not found. Without it GetAll loads its
	// missing keys one by one with Load.
	LoadAll func(ctx context.Context, keys []K) (map[K]V, error)
	// LoadTimeout bounds one load and is the lease's time: a waiter loads
	// itself after it. Default 10s.
	LoadTimeout time.Duration
	// NotFoundTTL is how long a key the loader did not find is remembered
	// as absent in Redis (0: not remembered, every miss loads again).
	NotFoundTTL time.Duration
	// TTL and MaxIdle are the expiry of loaded entries of a MapCache (as
	// PutWithTTL's; 0: none). A LocalCachedMap with them set is an error.
	TTL, MaxIdle time.Duration
	// RefreshAfter makes Get stale-while-revalidate: a read that finds an
	// entry due for refresh returns it at once, and the key is reloaded in
	// the background by one instance of the deployment at a time (the one
	// that takes the key's load lease; the others keep serving the entry).
	// On a LocalCachedMap an entry is due when it was cached in the local
	// cache at least RefreshAfter ago. On a MapCache RefreshAfter needs a
	// TTL above it, and an entry is due when its remaining time to live in
	// Redis (which every instance reads, and a Java RMapCache writes too)
	// is at most TTL - RefreshAfter: for an entry stored with TTL, as the
	// loader's are, that is an age of RefreshAfter or more; an entry
	// without a TTL is never refreshed, one stored with a shorter TTL
	// sooner. The reloaded value replaces the entry only if the key was not
	// written since the refresh read it (a MapCache's with a fresh TTL and
	// MaxIdle), and reaches every instance as any write does. A failed
	// reload keeps the old value (served until it expires, if it does) and
	// holds the lease for LoadTimeout, so a failing source is asked once
	// per LoadTimeout per key. ErrKeyNotFound removes the key of a
	// LocalCachedMap; a MapCache's entry is left to expire. 0 (the
	// default): no refresh.
	RefreshAfter time.Duration
}

// defaultLoadTimeout is ReadThrough.LoadTimeout's default.
const defaultLoadTimeout = 10 * time.Second

// WithReadThrough gives a LocalCachedMap (GetLocalCachedMap) or a MapCache
// (GetMapCache) a loader for the keys it misses (see ReadThrough). K and V
// must be the map's: otherwise, or with a nil Load or a negative duration,
// every call of a LocalCachedMap, and MapCache.Get, return
// ErrInvalidOption. Other objects ignore it. A LocalCachedMap's loader is
// its handle's (and ends with Close); the MapCache handles of one name (and
// K, V) on one Client share one loader, the first handle's ReadThrough,
// with its subscription and counts, kept until Client.Close: GetMapCache
// may be called per request.
func WithReadThrough[K comparable, V any](rt ReadThrough[K, V]) ObjectOption {
	return func(o *objectOptions) { o.loader = rt }
}

// readThroughOf returns the map's ReadThrough from opts (nil when none) or
// the error every call of the map returns.
func readThroughOf[K comparable, V any](c *Client, kind, name, hash, expiry string, opts []ObjectOption) (*readThrough[K, V], error) {
	o := objectOptionsOf(opts)
	if o.loader == nil {
		return nil, nil
	}
	rt, ok := o.loader.(ReadThrough[K, V])
	switch {
	case !ok:
		return nil, objectErr(kind, name, invalidOption(ErrInvalidOption, "ReadThrough", fmt.Sprintf("%T", o.loader),
			fmt.Sprintf("a ReadThrough[%T, %T]", *new(K), *new(V))))
	case rt.Load == nil:
		return nil, objectErr(kind, name, invalidOption(ErrInvalidOption, "ReadThrough.Load", nil, "a loader"))
	case rt.LoadTimeout < 0:
		return nil, objectErr(kind, name, invalidOption(ErrInvalidOption, "ReadThrough.LoadTimeout", rt.LoadTimeout, "at least 0"))
	case rt.NotFoundTTL < 0:
		return nil, objectErr(kind, name, invalidOption(ErrInvalidOption, "ReadThrough.NotFoundTTL", rt.NotFoundTTL, "at least 0"))
	case rt.TTL < 0 || rt.MaxIdle < 0:
		return nil, objectErr(kind, name, invalidOption(ErrInvalidOption, "ReadThrough.TTL", rt.TTL, "at least 0"))
	case expiry == "" && (rt.TTL != 0 || rt.MaxIdle != 0):
		return nil, objectErr(kind, name, invalidOption(ErrInvalidOption, "ReadThrough.TTL", rt.TTL, "0 on a LocalCachedMap"))
	case rt.RefreshAfter < 0 || expiry != "" && rt.RefreshAfter != 0 && (rt.TTL == 0 || rt.RefreshAfter >= rt.TTL):
		return nil, objectErr(kind, name, invalidOption(ErrInvalidOption, "ReadThrough.RefreshAfter", rt.RefreshAfter,
			"at least 0; on a MapCache 0, or below a TTL that is set"))
	}
	if rt.LoadTimeout == 0 {
		rt.LoadTimeout = defaultLoadTimeout
	}
	return &readThrough[K, V]{
		c: c, kind: kind, name: name, opts: rt, hash: hash, expiry: expiry,
		channel: suffixName(name, "load"),
		stats:   &cacheCounters{},
		flights: map[[16]byte]*loadFlight[V]{},
		waiters: map[[16]byte]chan struct{}{},
	}, nil
}

// types names K and V, for the client's registry of MapCache loaders.
func (rt *readThrough[K, V]) types() string {
	return fmt.Sprintf("%T\x00%T", *new(K), *new(V))
}

// readThrough is a map's loader: its in-process flights (one per key being
// resolved) and its side of the {name}:load channel. It is safe for
// concurrent use.
type readThrough[K comparable, V any] struct {
	c            *Client
	kind, name   string
	opts         ReadThrough[K, V]
	hash, expiry string // the map's hash; a MapCache's timeout zset ("" otherwise)
	channel      string
	stats        *cacheCounters // loads and their errors: the LocalCachedMap's, or its own (MapCache)
	registered   atomic.Bool    // a MapCache's: stats are in the client's Stats.Cache

	subMu sync.Mutex // orders subscribing and closing
	sub   *channelSub
	done  bool // closed: no new subscription

	mu         sync.Mutex
	flights    map[[16]byte]*loadFlight[V]
	waiters    map[[16]byte]chan struct{} // closed by the key's message, a loss or a confirmation
	subscribed bool                       // the channel's subscription is confirmed and not lost since

	refresh refreshes[K] // a MapCache's keys being refreshed (RefreshAfter)
}

// loadFlight is the resolution of one key in this process, shared by its
// callers; it ends when every caller has given up.
type loadFlight[V any] struct {
	done   chan struct{} // closed once val, ok and err are set
	val    V
	ok     bool
	err    error
	refs   int // callers waiting; guarded by readThrough.mu
	cancel context.CancelFunc
}

// missed is what a map gives the loader for one key it missed: the key, its
// encoding and hash, how to read it again (the map's own read, no caching
// needed) and how to store a loaded value if the key is still absent
// (returning the value that is in the map then).
type missed[K comparable, V any] struct {
	key   K
	k     []byte
	h     [16]byte
	read  func(ctx context.Context) (V, bool, error)
	store func(ctx context.Context, v V) (V, error)
}

// get resolves a key the map missed: it joins this process's flight for
// the key, or starts one, and waits for its result or ctx.
func (rt *readThrough[K, V]) get(ctx context.Context, m missed[K, V]) (V, bool, error) {
	var zero V
	rt.mu.Lock()
	f := rt.flights[m.h]
	if f == nil {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &loadFlight[V]{done: make(chan struct{}), cancel: cancel}
		if !rt.c.handles.spawn(func(cctx context.Context) {
			stop := context.AfterFunc(cctx, cancel)
			defer stop()
			rt.fly(fctx, f, m)
		}) {
			rt.mu.Unlock()
			cancel()
			return zero, false, ErrClientClosed
		}
		rt.flights[m.h] = f
	}
	f.refs++
	rt.mu.Unlock()
	select {
	case <-f.done:
		return f.val, f.ok, f.err
	case <-ctx.Done():
		rt.leave(m.h, f)
		return zero, false, objectErr(rt.kind, rt.name, ctx.Err())
	}
}

// leave counts out a caller that gave up; the last one cancels the flight.
func (rt *readThrough[K, V]) leave(h [16]byte, f *loadFlight[V]) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	f.refs--
	if f.refs == 0 {
		if rt.flights[h] == f {
			delete(rt.flights, h)
		}
		f.cancel()
	}
}

// fly runs one flight to its result.
func (rt *readThrough[K, V]) fly(ctx context.Context, f *loadFlight[V], m missed[K, V]) {
	v, ok, err := rt.resolve(ctx, m)
	rt.mu.Lock()
	f.val, f.ok, f.err = v, ok, err
	if rt.flights[m.h] == f {
		delete(rt.flights, m.h)
	}
	rt.mu.Unlock()
	close(f.done)
	f.cancel()
}

// Replies of load_claim.
const (
	claimPresent  = 1
	claimNotFound = 2
	claimTaken    = 3
	claimWait     = 4
)

// resolve reads the key, and while it is absent claims its load: it loads
// when it gets the lease and otherwise waits for the holder's message (or
// the lease's end) and reads again.
func (rt *readThrough[K, V]) resolve(ctx context.Context, m missed[K, V]) (V, bool, error) {
	var zero V
	rt.subscribe(ctx)
	token := rt.c.ID() + ":" + rt.c.newRequest()
	lease, marker := rt.keysOf(m.h)
	keys := []string{rt.hash, lease, marker}
	if rt.expiry != "" {
		keys = append(keys, rt.expiry)
	}
	ms := strconv.FormatInt(rt.opts.LoadTimeout.Milliseconds(), 10)
	for present := 0; ; {
		v, ok, err := m.read(ctx)
		if err != nil || ok {
			return v, ok, err
		}
		wake, subscribed := rt.wait(m.h)
		reply, err := rt.c.scripts.run(ctx, scriptLoadClaim, keys, m.k, token, ms).Int64Slice()
		if err != nil || len(reply) == 0 {
			rt.unwait(m.h, wake)
			if err == nil {
				err = fmt.Errorf("%w: load_claim replied %v", ErrUnexpectedReply, reply)
			}
			return zero, false, objectErr(rt.kind, rt.name, err)
		}
		switch reply[0] {
		case claimPresent: // written since the read (or expired, not yet deleted): read again
			rt.unwait(m.h, wake)
			if present++; present > 3 {
				return zero, false, nil
			}
			continue
		case claimNotFound:
			rt.unwait(m.h, wake)
			return zero, false, nil
		case claimTaken:
			rt.unwait(m.h, wake)
			return rt.load(ctx, m, lease, marker, token)
		}
		d := rt.opts.LoadTimeout
		if len(reply) > 1 && reply[1] >= 0 {
			d = time.Duration(reply[1])*time.Millisecond + time.Millisecond
		}
		if !subscribed { // no message will come: look again soon
			d = min(d, 50*time.Millisecond)
		}
		t := time.NewTimer(d)
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			rt.unwait(m.h, wake)
			return zero, false, objectErr(rt.kind, rt.name, ctx.Err())
		}
		t.Stop()
		rt.unwait(m.h, wake)
	}
}
