package redisson

import (
	"container/list"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// LocalQuota configures the local-quota mode of a keyed limiter
// (FixedWindowLimiter.WithLocalQuota, GCRALimiter.WithLocalQuota). The zero
// value selects every default.
type LocalQuota struct {
	// Chunk is the most permits one identity takes from Redis at once.
	// Each identity starts with chunks of 1 (one round trip per decision,
	// as without local quota), doubles its chunk each time it uses one up,
	// up to Chunk, and halves it each time one expires unused; so cold
	// identities cost what they cost without local quota and hot ones reach
	// Chunk. Larger chunks mean fewer round trips (1/Chunk per decision for
	// a hot identity) and more under-admission: up to Chunk-1 permits per
	// client per identity may be held unused when a window ends. Default:
	// the limit (GCRA: the burst) / 100, at least 1 and at most 1000. Range
	// 1 to the limit (burst).
	Chunk int64

	// MaxIdentities bounds the identities whose chunks are kept in process
	// (least recently used first out). An identity pushed out keeps what
	// Redis counted for it: its unused permits expire with the window.
	// Default 10,000; negative values are an error.
	MaxIdentities int
}

// defaultMaxIdentities is LocalQuota.MaxIdentities' default.
const defaultMaxIdentities = 10_000

// LocalQuotaLimiter is a keyed limiter (a FixedWindowLimiter or a
// GCRALimiter) in local-quota mode: for each identity it takes permits from
// Redis in chunks, counted in the shared state by one script call before
// it serves any of them, and then decides in process until the chunk is
// used up or no longer valid. So all clients together never grant more
// than the limit in a window (GCRA: never more than the rate and burst
// allow), and a hot identity costs one round trip per chunk instead of one
// per decision. The price is under-admission: permits a client holds and
// does not serve are lost to the others until they expire (the window's
// end; for GCRA, Chunk emission intervals), at most Chunk-1 per client per
// identity at any time; see docs/ratelimit.md for the bound as measured.
// A fixed window's unused permits can be given back with Flush.
//
// Redisson has no counterpart. Keys: the wrapped limiter's (one string
// <name>:{<key>} per identity), and clients in local-quota mode may share a
// limiter with clients that are not. Under failover a chunk counted on a
// master that is lost before replicating is forgotten by Redis, as a plain
// decision would be; the client still serves it, so the window may grant
// up to a chunk per client more than the limit then. Complexity: O(1) per
// decision; memory in process O(MaxIdentities).
//
// One refill per identity is in flight at a time: goroutines that need
// permits while one is under way wait for it (or for their context) and
// then decide. RateDecision.Remaining is what this client holds plus what
// Redis had left at its last refill (other clients may have used some
// since); RetryAfter and ResetAfter are measured from when the last reply
// arrived, so they are late rather than early.
//
// A LocalQuotaLimiter is safe for concurrent use; it starts no goroutine.
type LocalQuotaLimiter struct {
	kind     string
	policy   RatePolicy
	limit    int64 // RateDecision.Limit: the limit or the burst
	maxWant  int64 // the largest chunk worth asking for
	maxIDs   int
	check    func(key string, n int64) error
	reserve  func(ctx context.Context, key string, want, need int64) (reservation, error)
	giveBack func(ctx context.Context, key string, n, token int64) error // nil: nothing goes back
	peek     func(ctx context.Context, key string) (RateDecision, error) // the wrapped limiter's
	reset    func(ctx context.Context, key string) error

	mu  sync.Mutex
	ids map[string]*quotaEntry
	lru list.List // of *quotaEntry, most recently used first
}

// reservation is a chunk taken from Redis (granted 0: refused).
type reservation struct {
	granted int64
	left    int64         // permits Redis had left after it
	valid   time.Duration // how long after the call was sent the chunk may be served
	retry   time.Duration // refused: until need permits fit
	reset   time.Duration // until a full allowance
	token   int64         // a fixed window's end, for giving back
}

// quotaEntry is one identity's state in process, guarded by the
// limiter's mu.
type quotaEntry struct {
	key          string
	elem         *list.Element // nil once pushed out
	local        int64         // permits held, counted in Redis, not yet served
	left         int64         // Redis's permits left at the last refill
	want         int64         // next chunk size
	validUntil   time.Time     // local permits may be served before this
	resetAt      time.Time     // a full allowance, as of the last reply
	blockedUntil time.Time     // a refusal stands until then ...
	blockedNeed  int64         // ... for requests needing this many more
	token        int64
	refill       chan struct{} // closed when the refill in flight ends
}

func newLocalQuotaLimiter(kind string, p RatePolicy, limit int64, q LocalQuota, badConfig error) *LocalQuotaLimiter {
	l := &LocalQuotaLimiter{kind: kind, policy: p, limit: limit, maxIDs: q.MaxIdentities, ids: map[string]*quotaEntry{}}
	if q.Chunk == 0 {
		q.Chunk = min(max(limit/100, 1), 1000)
	}
	l.maxWant = q.Chunk
	if l.maxIDs == 0 {
		l.maxIDs = defaultMaxIdentities
	}
	switch {
	case badConfig != nil:
	case q.Chunk < 1 || q.Chunk > limit:
		badConfig = objectErr(kind, p.Name, invalidOption(ErrInvalidOption, "local quota chunk", q.Chunk, fmt.Sprintf("1 to the limit %d", limit)))
	case q.MaxIdentities < 0:
		badConfig = objectErr(kind, p.Name, invalidOption(ErrInvalidOption, "local quota max identities", q.MaxIdentities, "at least 0"))
	}
	l.check = func(string, int64) error { return badConfig }
	return l
}

// WithLocalQuota returns l in local-quota mode, configured by q (see
// LocalQuotaLimiter). It does no I/O. An invalid q (Chunk outside 1 to the
// limit, negative MaxIdentities) makes every call return ErrInvalidOption.
func (l *FixedWindowLimiter) WithLocalQuota(q LocalQuota) *LocalQuotaLimiter {
	ql := newLocalQuotaLimiter(fixedWindowKind, l.Policy(), l.limit, q, nil)
	bad := ql.check
	ql.check = func(key string, n int64) error {
		if err := checkAllow(l.c, fixedWindowKind, l.name, l.badConfig, key, n, l.limit); err != nil {
			return err
		}
		return bad(key, n)
	}
	ql.reserve, ql.peek, ql.reset = l.reserve, l.Peek, l.Reset
	if l.window > 10*time.Millisecond {
		ql.giveBack = l.giveBack
	}
	return ql
}

// WithLocalQuota returns l in local-quota mode, configured by q (see
// LocalQuotaLimiter). A chunk of c permits is served for c-1 emission
// intervals after it is taken (at least 10ms, at most burst-c intervals),
// and is taken as if that time had passed already: an identity at rest
// loses that time's permits of its burst to its first chunk, and one under
// load loses nothing to it. Chunks are
// at most (burst+1)/2, so that a full burst can always hold one. It does no
// I/O. An invalid q (Chunk outside 1 to the burst, negative MaxIdentities)
// makes every call return ErrInvalidOption.
func (l *GCRALimiter) WithLocalQuota(q LocalQuota) *LocalQuotaLimiter {
	ql := newLocalQuotaLimiter(gcraKind, l.Policy(), l.burst, q, nil)
	ql.maxWant = max(min(ql.maxWant, (l.burst+1)/2), 1)
	bad := ql.check
	ql.check = func(key string, n int64) error {
		if err := checkAllow(l.c, gcraKind, l.name, l.badConfig, key, n, l.burst); err != nil {
			return err
		}
		return bad(key, n)
	}
	ql.reserve, ql.peek, ql.reset = l.reserve, l.Peek, l.Reset
	return ql
}

// Name returns the limiter's name, the prefix of its keys.
func (l *LocalQuotaLimiter) Name() string { return l.policy.Name }

// Policy returns the wrapped limiter's configuration.
func (l *LocalQuotaLimiter) Policy() RatePolicy { return l.policy }

// Allow asks for n permits for the identity key: from the permits this
// client holds for it when they suffice, otherwise from a new chunk taken
// from Redis (one script call, shared with every goroutine that needs the
// identity meanwhile). A rejected request is not counted; a refusal from
// Redis stands in process until its RetryAfter, so a hot identity over its
// limit does not cost a round trip per decision either.
//
// It returns the errors of the wrapped limiter's Allow (ErrInvalidRate,
// ErrEmptyKey, ErrInvalidPermits, ErrPermitsExceedRate, ErrWrongType,
// ErrEmptyName, ErrClientClosed, a Redis error), ErrInvalidOption for an
// invalid LocalQuota, and the context's error when ctx ends before the
// decision (a chunk whose reply was lost is counted in Redis and not
// served: under-admission, never over).
func (l *LocalQuotaLimiter) Allow(ctx context.Context, key string, n int64) (RateDecision, error) {
	if err := l.check(key, n); err != nil {
		return RateDecision{}, err
	}
	if err := ctx.Err(); err != nil {
		return RateDecision{}, objectErr(l.kind, l.policy.Name, err)
	}
	for {
		l.mu.Lock()
		e := l.entry(key)
		now := time.Now()
		if e.local > 0 && !now.Before(e.validUntil) {
			e.local = 0 // expired unused: ask for less next time
			e.want = max(e.want/2, 1)
		}
		if e.local >= n {
			e.local -= n
			d := l.decision(e, true, now)
			l.mu.Unlock()
			return d, nil
		}
		if n-e.local >= e.blockedNeed && now.Before(e.blockedUntil) {
			d := l.decision(e, false, now)
			l.mu.Unlock()
			return d, nil
		}
		if ch := e.refill; ch != nil {
			l.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return RateDecision{}, objectErr(l.kind, l.policy.Name, ctx.Err())
			}
		}
		return l.refill(ctx, e, n)
	}
}

// refill takes a chunk for e (l.mu held on entry, released on return) and
// decides the request for n permits with it.
func (l *LocalQuotaLimiter) refill(ctx context.Context, e *quotaEntry, n int64) (RateDecision, error) {
	need := n - e.local
	want := min(e.want, l.maxWant)
	if want < need {
		want = need // a plain decision: no chunk beyond this request
	}
	ch := make(chan struct{})
	e.refill = ch
	l.mu.Unlock()

	sent := time.Now()
	r, err := l.reserve(ctx, e.key, want, need)
	recv := time.Now()

	l.mu.Lock()
	defer l.mu.Unlock()
	e.refill = nil
	close(ch)
	if err != nil {
		return RateDecision{}, err
	}
	if e.local > 0 && !recv.Before(e.validUntil) {
		e.local = 0
	}
	e.left = r.left
	e.resetAt = recv.Add(r.reset)
	if r.granted < need {
		// From the reply's arrival: a RetryAfter late rather than early (the
		// refusal then stands up to a round trip longer than in Redis).
		e.blockedUntil, e.blockedNeed = recv.Add(r.retry), need
		return l.decision(e, false, recv), nil
	}
	e.blockedUntil = time.Time{}
	valid := sent.Add(r.valid)
	if e.local == 0 || valid.Before(e.validUntil) {
		e.validUntil = valid
	}
	e.local += r.granted - n
	e.token = r.token
	if r.granted >= want {
		e.want = min(max(want, e.want)*2, l.maxWant)
	}
	return l.decision(e, true, recv), nil
}

// decision describes e after a request (l.mu held).
func (l *LocalQuotaLimiter) decision(e *quotaEntry, allowed bool, now time.Time) RateDecision {
	d := RateDecision{Allowed: allowed, Limit: l.limit, Remaining: min(e.local+e.left, l.limit)}
	d.ResetAfter = max(e.resetAt.Sub(now), 0)
	if !allowed {
		d.RetryAfter = max(e.blockedUntil.Sub(now), time.Microsecond)
	}
	return d
}

// entry returns key's state (l.mu held), making it the most recently used
// and pushing out the least recently used identity beyond MaxIdentities
// (one with no refill in flight).
func (l *LocalQuotaLimiter) entry(key string) *quotaEntry {
	if e := l.ids[key]; e != nil {
		l.lru.MoveToFront(e.elem)
		return e
	}
	e := &quotaEntry{key: key, want: 1}
	e.elem = l.lru.PushFront(e)
	l.ids[key] = e
	for x := l.lru.Back(); len(l.ids) > l.maxIDs && x != nil; {
		old := x.Value.(*quotaEntry)
		x = x.Prev()
		if old.refill == nil && old != e {
			l.drop(old)
		}
	}
	return e
}

// drop forgets e (l.mu held).
func (l *LocalQuotaLimiter) drop(e *quotaEntry) {
	l.lru.Remove(e.elem)
	e.elem = nil
	delete(l.ids, e.key)
}

// Identities returns the number of identities whose state is kept in
// process (at most MaxIdentities, plus those with a refill in flight).
func (l *LocalQuotaLimiter) Identities() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ids)
}

// Flush forgets every identity's chunk, giving a fixed window's unused
// permits back to the window they were taken from (one script call per
// identity holding some; a window that has ended, or a window shorter than
// 10ms, gets nothing back, since its permits expired with it). Call it
// before a client stops serving, so that the others can use what it holds.
// Decisions after Flush take new chunks. It returns the first error (the
// permits not given back expire with their window), ErrClientClosed or the
// context's error.
func (l *LocalQuotaLimiter) Flush(ctx context.Context) error {
	type back struct {
		key      string
		n, token int64
	}
	var backs []back
	now := time.Now()
	l.mu.Lock()
	for e := l.lru.Front(); e != nil; {
		q := e.Value.(*quotaEntry)
		e = e.Next()
		if q.refill != nil {
			continue
		}
		if l.giveBack != nil && q.local > 0 && now.Before(q.validUntil) {
			backs = append(backs, back{q.key, q.local, q.token})
		}
		l.drop(q)
	}
	l.mu.Unlock()
	var first error
	for _, b := range backs {
		if err := l.giveBack(ctx, b.key, b.n, b.token); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// reserve takes a chunk of need to want permits for key (fixed_window_reserve).
func (l *FixedWindowLimiter) reserve(ctx context.Context, key string, want, need int64) (reservation, error) {
	k := identityKey(l.name, key)
	v, err := l.c.scripts.run(ctx, scriptFixedWindowReserve, []string{k}, l.limitArg, l.windowArg, want, need).Int64Slice()
	if err != nil {
		return reservation{}, objectErr(fixedWindowKind, k, err)
	}
	if len(v) != 4 {
		return reservation{}, objectErrorf(fixedWindowKind, l.name, "%w: %v", ErrUnexpectedReply, v)
	}
	ttl := time.Duration(v[2]) * time.Millisecond
	return reservation{
		granted: v[0],
		left:    v[1],
		valid:   max(ttl-time.Millisecond, 0), // a margin for the clocks' rates
		retry:   ttl + time.Millisecond,
		reset:   ttl,
		token:   v[3],
	}, nil
}

// giveBack returns n unused permits to the window that ends at token
// (fixed_window_return).
func (l *FixedWindowLimiter) giveBack(ctx context.Context, key string, n, token int64) error {
	k := identityKey(l.name, key)
	if err := l.c.scripts.run(ctx, scriptFixedWindowReturn, []string{k}, n, token).Err(); err != nil {
		return objectErr(fixedWindowKind, k, err)
	}
	return nil
}

// minGCRAChunkLife is the shortest time a GCRA chunk is served for, so
// that chunks outlive a round trip even when the emission interval is a
// microsecond.
const minGCRAChunkLife = 10 * time.Millisecond

// reserve takes a chunk of need to want permits for key (gcra_reserve),
// valid for want-1 emission intervals or minGCRAChunkLife, whichever is
// longer, but no longer than the burst less the chunk (so that an identity
// at rest can take it); with want == need it is a plain decision (no
// lookahead, nothing left to serve later).
func (l *GCRALimiter) reserve(ctx context.Context, key string, want, need int64) (reservation, error) {
	k := identityKey(l.name, key)
	var ahead time.Duration
	if want > need {
		ahead = min(max(time.Duration(want-1)*l.interval, minGCRAChunkLife), time.Duration(l.burst-want)*l.interval)
	}
	v, err := l.c.scripts.run(ctx, scriptGCRAReserve, []string{k}, l.intervalArg, l.burstArg, want, need,
		strconv.FormatInt(ahead.Microseconds(), 10)).Int64Slice()
	if err != nil {
		return reservation{}, objectErr(gcraKind, k, err)
	}
	if len(v) != 4 {
		return reservation{}, objectErrorf(gcraKind, l.name, "%w: %v", ErrUnexpectedReply, v)
	}
	return reservation{
		granted: v[0],
		left:    v[1],
		valid:   ahead,
		retry:   time.Duration(v[2]) * time.Microsecond,
		reset:   time.Duration(v[3]) * time.Microsecond,
	}, nil
}
