package redisson

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// idempotencyKind names an idempotency record in its errors and
// operations.
const idempotencyKind = "idempotency"

// IdempotencyRecord is the record of one idempotency key: what runs the
// work the key names once (httplimit.NewIdempotency builds its middleware
// on it). It is one hash at its name (state, fp, owner, status, headers,
// body) and one channel, redisson_idempotency__channel:{name}, that wakes
// the callers waiting for the run to end.
//
// Begin decides, in one script call, whether the caller runs the work
// (the record is created, running, with a lease as its TTL), is answered
// with the stored result, or finds the key running (and waits, woken by
// message, when asked to). The runner keeps its lease with Renew while it
// works and ends with Complete (the result stored for the retention) or
// Abandon (the record deleted: the next caller runs the work). A runner
// that crashes stops renewing: the record expires with its lease, and the
// next caller runs the work.
//
// Every call of a runner names it by the token Begin returned, and Begin
// gives each call a fresh token: a call resent by go-redis after a lost
// reply finds its own work done (Begin reports Run again to its caller, and
// never to another; Complete stores the same values again).
//
// An IdempotencyRecord holds no state: it is safe for concurrent use.
type IdempotencyRecord struct {
	base
	channel string
}

// GetIdempotencyRecord returns a handle for the idempotency record called
// name. It does no I/O; an empty name makes every method return
// ErrEmptyName. On Redis Cluster a name containing '{' must carry a
// complete hash tag; other such names return ErrInvalidName.
func (c *Client) GetIdempotencyRecord(name string) *IdempotencyRecord {
	r := &IdempotencyRecord{channel: prefixName("redisson_idempotency__channel", name)}
	r.base = newBase(c, idempotencyKind, name, nil, r.channel)
	return r
}

// Name returns the record's name, its Redis key.
func (r *IdempotencyRecord) Name() string { return r.name }

// Begin decides what the caller does with the work fingerprint names (a
// hash of the request, say): run it (State IdempotencyRun, with a Token
// and the record leased for lease), replay the stored result
// (IdempotencyReplay), or nothing (IdempotencyMismatch: the key is the
// record of another fingerprint). When another caller runs the work, Begin
// waits up to wait (a negative wait: until ctx ends; 0: not at all), woken
// by Complete's or Abandon's message or by the end of the runner's lease,
// and decides again; when the wait runs out it returns IdempotencyBusy. A
// replay found at once costs one round trip.
//
// It returns ErrInvalidIdempotency for a lease below 1ms, ctx.Err()
// (wrapped) when ctx ends first, ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, ErrUnexpectedReply, or a Redis error.
func (r *IdempotencyRecord) Begin(ctx context.Context, fingerprint string, lease, wait time.Duration) (res IdempotencyResult, err error) {
	ctx, rec, err := r.open(ctx, opIdemBegin)
	defer func() { rec.end(err, res.State.outcome()) }()
	if err == nil && lease < time.Millisecond {
		err = invalidOption(ErrInvalidIdempotency, "lease", lease, "at least 1ms")
	}
	if err != nil {
		return res, err
	}
	try := func(ctx context.Context, _ waitState) (bool, time.Duration, error) {
		got, retry, err := r.begin(ctx, fingerprint, lease)
		res = got
		return err == nil && got.State != IdempotencyBusy, retry, err
	}
	ok, retry, err := try(ctx, waitState{})
	if err != nil || ok || wait == 0 {
		return res, err
	}
	if _, err = r.c.await(ctx, waitSpec{what: r.kind, name: r.name, channel: r.channel, policy: idempotencyWakePolicy,
		wait: wait, recheck: true, retry: retry}, try); err != nil {
		return IdempotencyResult{}, err
	}
	return res, nil
}

// begin runs idem_begin once under a fresh token; with IdempotencyBusy it
// reports the runner's remaining lease.
func (r *IdempotencyRecord) begin(ctx context.Context, fingerprint string, lease time.Duration) (IdempotencyResult, time.Duration, error) {
	token := r.c.newOwner()
	vals, err := r.c.scripts.run(ctx, scriptIdemBegin, []string{r.name}, fingerprint, token, lease.Milliseconds()).Slice()
	if err != nil {
		return IdempotencyResult{}, 0, r.wrap(err)
	}
	bad := func() (IdempotencyResult, time.Duration, error) {
		return IdempotencyResult{}, 0, r.errorf("%w: begin returned %v", ErrUnexpectedReply, vals)
	}
	if len(vals) == 0 {
		return bad()
	}
	state, _ := vals[0].(int64)
	switch {
	case state == 1 && len(vals) == 1:
		return IdempotencyResult{State: IdempotencyRun, Token: token}, 0, nil
	case state == 3 && len(vals) == 1:
		return IdempotencyResult{State: IdempotencyMismatch}, 0, nil
	case state == 0 && len(vals) == 2:
		ms, _ := vals[1].(int64)
		return IdempotencyResult{State: IdempotencyBusy}, time.Duration(max(ms, 0)) * time.Millisecond, nil
	case state == 2 && len(vals) == 4:
		st, _ := vals[1].(string)
		hdr, _ := vals[2].(string)
		body, _ := vals[3].(string)
		code, err := strconv.Atoi(st)
		if err != nil {
			return bad()
		}
		return IdempotencyResult{State: IdempotencyReplay, Status: code, Header: []byte(hdr), Body: []byte(body)}, 0, nil
	}
	return bad()
}

// idempotencyWakePolicy: every message ("done": a run ended) wakes every
// local waiter to decide again.
func idempotencyWakePolicy(string) wake { return wake{n: -1} }

// Renew extends the lease of the run token names to lease from now. It
// reports false when the run is no longer leased under token (its lease ran
// out, or it was completed or abandoned).
//
// It returns ErrInvalidIdempotency for an empty token or a lease below
// 1ms, ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed,
// ctx.Err() (wrapped), or a Redis error.
func (r *IdempotencyRecord) Renew(ctx context.Context, token string, lease time.Duration) (ok bool, err error) {
	ctx, rec, err := r.openRun(ctx, opIdemRenew, token)
	defer func() { rec.end(err, OutcomeOK) }()
	switch {
	case err != nil:
		return false, err
	case lease < time.Millisecond:
		return false, invalidOption(ErrInvalidIdempotency, "lease", lease, "at least 1ms")
	}
	n, err := r.c.scripts.run(ctx, scriptIdemRenew, []string{r.name}, token, lease.Milliseconds()).Int64()
	return n == 1, r.wrap(err)
}

// Complete stores the result of the run token names (status, and header
// and body as opaque bytes) for retention, and wakes the callers waiting
// for it. It reports false when the run is no longer leased under token:
// nothing is stored then.
//
// It returns ErrInvalidIdempotency for an empty token, a status outside
// 100 to 999 or a retention below 1ms, ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, ctx.Err() (wrapped), or a Redis error.
func (r *IdempotencyRecord) Complete(ctx context.Context, token string, status int, header, body []byte, retention time.Duration) (ok bool, err error) {
	ctx, rec, err := r.openRun(ctx, opIdemFinish, token)
	defer func() { rec.end(err, OutcomeOK) }()
	switch {
	case err != nil:
		return false, err
	case status < 100 || status > 999:
		return false, invalidOption(ErrInvalidIdempotency, "status", status, "100 to 999")
	case retention < time.Millisecond:
		return false, invalidOption(ErrInvalidIdempotency, "retention", retention, "at least 1ms")
	}
	return r.finish(ctx, token, "1", status, header, body, retention)
}

// Abandon deletes the record of the run token names, without a result, and
// wakes the callers waiting for it: the next one runs the work. It reports
// false when the run is no longer leased under token.
//
// It returns ErrInvalidIdempotency for an empty token, ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, ctx.Err() (wrapped), or a
// Redis error.
func (r *IdempotencyRecord) Abandon(ctx context.Context, token string) (ok bool, err error) {
	ctx, rec, err := r.openRun(ctx, opIdemFinish, token)
	defer func() { rec.end(err, OutcomeOK) }()
	switch {
	case err != nil:
		return false, err
	}
	return r.finish(ctx, token, "0", 0, nil, nil, 0)
}

// openRun is open for a call of the run token names: an empty token is
// ErrInvalidIdempotency.
func (r *IdempotencyRecord) openRun(ctx context.Context, op, token string) (context.Context, *opRecord, error) {
	ctx, rec, err := r.open(ctx, op)
	if err == nil && token == "" {
		err = fmt.Errorf("%w: empty token", ErrInvalidIdempotency)
	}
	return ctx, rec, err
}

// finish runs idem_finish.
func (r *IdempotencyRecord) finish(ctx context.Context, token, store string, status int, header, body []byte, retention time.Duration) (bool, error) {
	n, err := r.c.scripts.run(ctx, scriptIdemFinish, []string{r.name, r.channel}, token, store, status, header, body,
		retention.Milliseconds(), r.c.pubsub.publishArg(ctx)).Int64()
	return n == 1, r.wrap(err)
}
