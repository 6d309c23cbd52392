package redisson

import (
	"context"
	"crypto/rand"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// RateType is the scope of a RateLimiter's budget.
type RateType int

const (
	// Overall gives every client of the limiter one shared budget
	// (Redisson's RateType.OVERALL).
	Overall RateType = 0
	// PerClient gives each Client (each RedissonClient, in Java) a budget
	// of its own (Redisson's RateType.PER_CLIENT).
	PerClient RateType = 1
)

// String returns "OVERALL" or "PER_CLIENT", as Redisson names them.
func (t RateType) String() string {
	switch t {
	case Overall:
		return "OVERALL"
	case PerClient:
		return "PER_CLIENT"
	}
	return "RateType(" + strconv.Itoa(int(t)) + ")"
}

// RateLimiterConfig is a RateLimiter's configuration as stored in Redis.
type RateLimiterConfig struct {
	Type     RateType
	Rate     int64         // permits per Interval
	Interval time.Duration // whole milliseconds
	// KeepAlive, when not 0, is how long the limiter may go without a
	// decision before its configuration expires (and with it the limiter).
	KeepAlive time.Duration
}

// maxRate is the largest rate: one grant's permits are stored as a uint32
// in the log entry, as Redisson stores them.
const maxRate = math.MaxUint32

// RateLimiter is a distributed sliding-window rate limiter, wire-compatible
// with Redisson's RRateLimiter: at most Rate permits are granted in any
// trailing Interval, to all clients together (Overall) or to each Client
// (PerClient).
//
// Keys, as in Redisson (all in the slot of the name): the config hash at
// the name (fields rate, interval in ms, type 0 or 1, keepAliveTime in ms);
// for the overall scope a log of grants, the sorted set {name}:permits, and
// the available count {name}:value; for a client's scope the same with
// ":<client ID>" appended. A log member is byte 16, 16 random bytes and the
// grant's permits as a uint32 (little-endian, Redisson's
// struct.pack('Bc0I', ...)); its score is the grant's time in ms. One key is
// this library's own: a checkpoint per scope ({name}:permits:sum, or
// {name}:permits:<client ID>:sum) holding the permits in the log as this
// library last left it.
//
// Every decision (TryAcquire, each try of TryAcquireWait and Acquire) is one
// script call. The grant log is the only truth: the available count is
// never trusted, only written back for Redisson clients, which read it, so
// a count that drifted (Redisson issues #2072, #3639, #7329, #7342) cannot
// grant too much. A decision reads the permits in the log from the
// checkpoint when the count, the number of entries and the newest entry are
// as this library left them, and otherwise (a Redisson client wrote in
// between) sums the whole live log, which costs time in proportion to its
// entries. So the cost of a decision does not grow with the window in a
// deployment of this library alone, and grows once after each Redisson
// write in a mixed one. (What the checkpoint cannot tell apart: a Redisson
// release, which raises the count without touching the log, followed by
// Redisson grants and reclaims that bring the count and the number of
// entries back and leave the newest entry in place.)
//
// Clock: the Redis server's (TIME inside the script), so the clocks of the
// clients do not matter. Redisson clients log their grants with their own
// wall clock: a Java client whose clock runs d ahead of the server's makes
// its grants count d longer for this library's decisions, one whose clock
// lags counts them d shorter, and the guarantee holds only up to that skew
// (which includes the time a Java call takes to reach the server, since its
// clock is read before the call is sent).
//
// Waiting: a refused try learns from the script when enough logged permits
// leave the window, and Acquire and TryAcquireWait sleep exactly that long
// before the next try. Waiters are not queued: those that wake together
// race, and the losers sleep again.
//
// There is no Release. A log entry does not say whose grant it is, so
// permits given back could only be taken from the oldest entries (safe, but
// not the caller's grant), and a release resent by go-redis after a lost
// reply would give them back twice. Redisson's release raises the count
// without touching the log (#7329, #7342): this library's next decision
// recomputes the count from the log, so permits released by a Redisson
// client are not granted again until they leave the window.
//
// Expiry: after each decision the scope's log and count expire when the
// newest grant leaves the window, so an idle limiter keeps only its config
// hash, which expires too when a keep-alive is set (sliding: each decision
// renews it). Redisson clients do not renew those expiries unless the
// limiter has a keep-alive (they then set it on every call); with Redisson
// clients taking permits, configure one (TrySetRateKeepAlive), or a Java
// grant made after this library's last decision may expire early.
//
// A RateLimiter is safe for concurrent use and holds no state of its own.
type RateLimiter struct {
	base
	keys []string // config, value, client value, permits, client permits, sum, client sum; never modified
}

const rateKind = "rate limiter"

// GetRateLimiter returns the rate limiter called name. It does no I/O; an
// empty name makes every method return ErrEmptyName. On Redis Cluster a
// name containing '{' must carry a complete hash tag, so that the limiter's
// keys share one slot; other such names return ErrInvalidName.
func (c *Client) GetRateLimiter(name string) *RateLimiter {
	value, permits := suffixName(name, "value"), suffixName(name, "permits")
	clientPermits := suffixName(permits, c.id)
	keys := []string{name, value, suffixName(value, c.id), permits, clientPermits,
		suffixName(permits, "sum"), suffixName(clientPermits, "sum")}
	return &RateLimiter{base: newBase(c, rateKind, name, nil, keys[1:]...), keys: keys}
}

// Name returns the limiter's name, the key of its config hash.
func (r *RateLimiter) Name() string { return r.name }

// wrap names the limiter in err and maps the scripts' errors to sentinels.
func (r *RateLimiter) wrap(err error) error {
	if err == nil || errors.Is(err, ErrClientClosed) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "NOTINIT"):
		return objectErrorf(rateKind, r.name, "%w", ErrNotInitialized)
	case strings.HasPrefix(msg, "EXCEEDS"):
		return objectErrorf(rateKind, r.name, "%w", ErrPermitsExceedRate)
	case strings.HasPrefix(msg, "BADENTRY"):
		return objectErrorf(rateKind, r.name, "%w: %s", ErrUnexpectedReply, msg)
	}
	return objectErr(rateKind, r.name, err)
}

// TrySetRate configures the limiter with rate permits per interval for
// scope, if it has no configuration yet, and reports whether it did so. It
// returns ErrInvalidRate for a rate outside 1..4294967295, an interval that
// is not a positive whole number of milliseconds, or an unknown scope;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (r *RateLimiter) TrySetRate(ctx context.Context, scope RateType, rate int64, interval time.Duration) (_ bool, err error) {
	ctx, rec := r.begin(ctx, opRateTrySetRate)
	defer func() { rec.end(err, OutcomeOK) }()
	return r.set(ctx, "try", RateLimiterConfig{Type: scope, Rate: rate, Interval: interval})
}

// TrySetRateKeepAlive is TrySetRate with a keep-alive: the configuration
// (and with it the limiter) expires after keepAlive without a decision. It
// returns ErrInvalidRate also for a keepAlive shorter than interval or not
// in whole milliseconds, as Redisson does.
func (r *RateLimiter) TrySetRateKeepAlive(ctx context.Context, scope RateType, rate int64, interval, keepAlive time.Duration) (_ bool, err error) {
	ctx, rec := r.begin(ctx, opRateTrySetRate)
	defer func() { rec.end(err, OutcomeOK) }()
	if keepAlive == 0 {
		return false, r.badConfig("keep-alive", time.Duration(0), "above 0")
	}
	return r.set(ctx, "try", RateLimiterConfig{Type: scope, Rate: rate, Interval: interval, KeepAlive: keepAlive})
}

// SetRate replaces the limiter's configuration and, as Redisson does,
// resets its state: the overall log and this client's log are deleted, so
// the full rate is available at once. Other clients' PerClient logs are
// kept and judged against the new rate. It returns the errors of
// TrySetRate.
func (r *RateLimiter) SetRate(ctx context.Context, scope RateType, rate int64, interval time.Duration) (err error) {
	ctx, rec := r.begin(ctx, opRateSetRate)
	defer func() { rec.end(err, OutcomeOK) }()
	_, err = r.set(ctx, "set", RateLimiterConfig{Type: scope, Rate: rate, Interval: interval})
	return err
}

// SetRateKeepAlive is SetRate with a keep-alive (see TrySetRateKeepAlive).
func (r *RateLimiter) SetRateKeepAlive(ctx context.Context, scope RateType, rate int64, interval, keepAlive time.Duration) (err error) {
	ctx, rec := r.begin(ctx, opRateSetRate)
	defer func() { rec.end(err, OutcomeOK) }()
	if keepAlive == 0 {
		return r.badConfig("keep-alive", time.Duration(0), "above 0")
	}
	_, err = r.set(ctx, "set", RateLimiterConfig{Type: scope, Rate: rate, Interval: interval, KeepAlive: keepAlive})
	return err
}

func (r *RateLimiter) badConfig(field string, value any, rule string) error {
	return objectErr(rateKind, r.name, invalidOption(ErrInvalidRate, field, value, rule))
}

func (r *RateLimiter) set(ctx context.Context, mode string, cfg RateLimiterConfig) (bool, error) {
	if err := r.base.check(); err != nil {
		return false, err
	}
	switch {
	case cfg.Type != Overall && cfg.Type != PerClient:
		return false, r.badConfig("type", cfg.Type, "Overall or PerClient")
	case cfg.Rate < 1 || cfg.Rate > maxRate:
		return false, r.badConfig("rate", cfg.Rate, "1 to "+strconv.FormatInt(maxRate, 10))
	case cfg.Interval < time.Millisecond || cfg.Interval%time.Millisecond != 0:
		return false, r.badConfig("interval", cfg.Interval, "whole milliseconds, at least 1ms")
	case cfg.KeepAlive < 0 || cfg.KeepAlive%time.Millisecond != 0 ||
		(cfg.KeepAlive > 0 && cfg.KeepAlive < cfg.Interval):
		return false, r.badConfig("keep-alive", cfg.KeepAlive, "0 or whole milliseconds, at least the interval "+cfg.Interval.String())
	}
	n, err := r.c.scripts.run(ctx, scriptRateSet, r.keys, mode, cfg.Rate,
		cfg.Interval.Milliseconds(), int(cfg.Type), cfg.KeepAlive.Milliseconds()).Int64()
	return n == 1, r.wrap(err)
}

// Config returns the limiter's configuration. It returns ErrNotInitialized
// when the limiter has none; ErrUnexpectedReply for a config hash this
// package cannot read; ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise.
func (r *RateLimiter) Config(ctx context.Context) (_ RateLimiterConfig, err error) {
	ctx, rec, err := r.open(ctx, opRateConfig)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return RateLimiterConfig{}, err
	}
	r.c.trip(ctx, 1)
	h, err := r.c.rdb.HGetAll(ctx, r.name).Result()
	if err != nil {
		return RateLimiterConfig{}, r.wrap(err)
	}
	if len(h) == 0 {
		return RateLimiterConfig{}, objectErrorf(rateKind, r.name, "%w", ErrNotInitialized)
	}
	var v [4]int64
	for i, f := range []string{"rate", "interval", "type", "keepAliveTime"} {
		s, ok := h[f]
		if !ok && f == "keepAliveTime" { // Redisson before 3.40 writes none
			continue
		}
		if v[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return RateLimiterConfig{}, objectErrorf(rateKind, r.name, "%w: field %s = %q", ErrUnexpectedReply, f, s)
		}
	}
	return RateLimiterConfig{
		Rate:      v[0],
		Interval:  time.Duration(v[1]) * time.Millisecond,
		Type:      RateType(v[2]),
		KeepAlive: time.Duration(v[3]) * time.Millisecond,
	}, nil
}

// TryAcquire takes n permits if the window has room for them now, and
// reports whether it took them. It makes one script call. It returns
// ErrInvalidPermits for n < 1; ErrPermitsExceedRate for n above the rate;
// ErrNotInitialized before TrySetRate or SetRate; ErrUnexpectedReply for a
// log entry or config field not in Redisson's format; ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise. An error
// leaves no permit of this call taken (a grant whose reply was lost is
// undone while Redis can be reached), and a call resent by go-redis after a
// lost reply takes its permits once.
func (r *RateLimiter) TryAcquire(ctx context.Context, n int64) (ok bool, err error) {
	ctx, rec := r.begin(ctx, opRateAcquire)
	defer func() { rec.end(err, grantedIf(ok)) }()
	if err := r.check(n); err != nil {
		return false, err
	}
	g, err := r.try(ctx, n)
	return g.ok, err
}

// TryAcquireWait takes n permits if the window will have room for them
// within wait, and reports whether it took them. Between tries it sleeps
// exactly until enough logged permits leave the window (the script says
// when), so it sends one call per try, not a poll. It returns false, nil as
// soon as the permits cannot come within wait (without sleeping out the
// rest of it), and ctx.Err() (wrapped) when ctx ends first. wait == 0 makes
// a single try. It returns ErrNegativeDuration for wait < 0, and the errors
// of TryAcquire; Client.Close wakes it, and it returns ErrClientClosed at
// once without taking permits.
func (r *RateLimiter) TryAcquireWait(ctx context.Context, n int64, wait time.Duration) (ok bool, err error) {
	ctx, rec := r.begin(ctx, opRateAcquire)
	defer func() { rec.end(err, limitedIf(ok, wait)) }()
	if err := r.check(n); err != nil {
		return false, err
	}
	if wait < 0 {
		return false, objectErrorf(rateKind, r.name, "%w: wait %v", ErrNegativeDuration, wait)
	}
	g, err := r.acquire(ctx, n, time.Now().Add(wait))
	return g.ok, err
}

// Acquire takes n permits, sleeping between tries until enough logged
// permits leave the window, as TryAcquireWait does, until it gets them or
// ctx ends. It returns ctx.Err() (wrapped) when ctx ends first, with no
// permit of this call taken, and the errors of TryAcquire; Client.Close
// wakes it, and it returns ErrClientClosed at once without taking permits.
func (r *RateLimiter) Acquire(ctx context.Context, n int64) (err error) {
	ctx, rec := r.begin(ctx, opRateAcquire)
	defer func() { rec.end(err, OutcomeAcquired) }()
	if err := r.check(n); err != nil {
		return err
	}
	_, err = r.acquire(ctx, n, time.Time{})
	return err
}

// acquire tries until n permits are granted, deadline passes (a zero
// deadline never does) or ctx ends, and returns the last decision.
func (r *RateLimiter) acquire(ctx context.Context, n int64, deadline time.Time) (grant, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		g, err := r.try(ctx, n)
		if err != nil || g.ok {
			return g, err
		}
		if !deadline.IsZero() && time.Until(deadline) < g.wait {
			return g, nil
		}
		if timer == nil {
			timer = time.NewTimer(g.wait)
		} else {
			timer.Reset(g.wait)
		}
		t := r.c.blockStart()
		select {
		case <-ctx.Done():
			r.c.blockEnd(ctx, t)
			return grant{}, objectErrorf(rateKind, r.name, "%w", ctx.Err())
		case <-r.c.closing:
			r.c.blockEnd(ctx, t)
			return grant{}, ErrClientClosed
		case <-timer.C:
		}
		r.c.blockEnd(ctx, t)
		if r.c.closed.Load() {
			return grant{}, ErrClientClosed
		}
	}
}

// check replaces the base's for a call asking n permits.
func (r *RateLimiter) check(n int64) error {
	if err := r.base.check(); err != nil {
		return err
	}
	if n < 1 {
		return r.base.wrap(invalidOption(ErrInvalidPermits, "permits", n, "at least 1"))
	}
	if n > maxRate {
		return r.base.wrap(invalidOption(ErrPermitsExceedRate, "permits", n, "at most "+strconv.FormatInt(maxRate, 10)))
	}
	return nil
}

// grant is the outcome of one decision.
type grant struct {
	ok   bool
	wait time.Duration // when not ok: until enough permits leave the window
	at   int64         // the server's time of the decision, ms since the epoch
}

// try runs the acquire script once.
func (r *RateLimiter) try(ctx context.Context, n int64) (grant, error) {
	if err := ctx.Err(); err != nil {
		return grant{}, objectErrorf(rateKind, r.name, "%w", err)
	}
	var id [16]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	res, err := r.c.scripts.run(ctx, scriptRateAcquire, r.keys, n, id[:]).Int64Slice()
	if err != nil {
		if mayHaveRun(err) {
			// The script may have run and its reply been lost: undo it.
			r.undo(ctx, rateLogMember(id, n))
		}
		return grant{}, r.wrap(err)
	}
	if len(res) != 3 || res[0] < 0 || res[0] > 1 || (res[0] == 0 && res[1] < 1) {
		return grant{}, objectErrorf(rateKind, r.name, "%w: acquire returned %v", ErrUnexpectedReply, res)
	}
	if res[0] == 1 {
		return grant{ok: true, at: res[2]}, nil
	}
	return grant{wait: time.Duration(res[1]) * time.Millisecond, at: res[2]}, nil
}

// rateLogMember returns the log member of a grant of n permits named id.
func rateLogMember(id [16]byte, n int64) string {
	b := make([]byte, 0, 21)
	b = append(b, 16)
	b = append(b, id[:]...)
	b = append(b, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	return string(b)
}

// undo removes the grant member, in case a decision whose outcome is
// unknown made it, within the client's CleanupTimeout.
func (r *RateLimiter) undo(ctx context.Context, member string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.c.opts.CleanupTimeout)
	defer cancel()
	_ = r.c.scripts.run(cctx, scriptRateUndo, r.keys, member).Err()
}

// AvailablePermits returns how many permits the limiter would grant now:
// the rate minus the permits granted within the last interval, never below
// 0. It writes nothing. It returns ErrNotInitialized before TrySetRate or
// SetRate; ErrUnexpectedReply for a log entry or config field not in
// Redisson's format; ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (r *RateLimiter) AvailablePermits(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := r.open(ctx, opRateAvailable)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	n, err := r.c.scripts.run(ctx, scriptRateAvailable, r.keys).Int64()
	return n, r.wrap(err)
}

// Delete deletes the limiter's configuration, the overall log and count,
// and this client's; and reports whether any of them existed. Other
// clients' PerClient state expires by itself within an interval. It
// returns ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis error.
func (r *RateLimiter) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := r.open(ctx, opRateDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	r.c.trip(ctx, 1)
	n, err := r.c.rdb.Del(ctx, r.keys...).Result()
	return n > 0, r.wrap(err)
}
