package redisson

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// commit is Commit with the turn held and the transaction open.
func (t *Transaction) commit(ctx context.Context) error {
	if len(t.buf.locks) == 0 {
		t.buf.done = true // reads only: nothing to apply or release
		return nil
	}
	if ctx.Err() != nil {
		return t.errorf("%w", ctx.Err())
	}
	if time.Since(t.start) > t.timeout {
		return t.timedOut(ctx, fmt.Sprintf("commit after the %v timeout", t.timeout))
	}
	latch := prefixName("redisson_unlock_latch", t.buf.names[0]) + ":" + t.name
	keys, argv := t.buf.commitCall(t.field, t.c.pubsub.publishArg(ctx), t.c.retryWindowArg)
	keys[0] = latch
	t.c.trip(ctx, 1)
	res, err := t.c.scripts.run(ctx, scriptTxCommit, keys, argv...).Int64()
	if err != nil && mayHaveRun(err) {
		// The reply was lost: the same call again either applies the
		// commit now or finds its latch and reports it applied.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.c.opts.CleanupTimeout)
		res, err = t.c.scripts.run(cctx, scriptTxCommit, keys, argv...).Int64()
		cancel()
		if err != nil {
			t.buf.done = true
			t.forget()
			return t.errorf("commit outcome unknown: %w", objectErr(transactionKind, t.name, err))
		}
	}
	switch {
	case err != nil:
		// An error reply (WRONGTYPE, ...) or a call never sent: nothing
		// applied.
		cctx, cancel := t.cleanupCtx(ctx)
		defer cancel()
		return errors.Join(t.wrap(err), t.rollback(cctx))
	case res < 0 && int(-res) <= len(t.buf.names):
		return t.timedOut(ctx, fmt.Sprintf("lock %q lost before commit", t.buf.names[-res-1]))
	case res != 1:
		cctx, cancel := t.cleanupCtx(ctx)
		defer cancel()
		return errors.Join(t.errorf("%w: commit returned %d", ErrUnexpectedReply, res), t.rollback(cctx))
	}
	t.buf.done = true
	t.forget()
	t.c.janitor.add(latch)
	for _, n := range t.buf.notes {
		for _, h := range n.hashes {
			n.local(h)
		}
	}
	return nil
}

// forget ends the transaction's holds here after the commit released them
// in Redis (or after an unknown outcome: they end with their lease there).
func (t *Transaction) forget() {
	for _, l := range t.buf.locks {
		l.mu.Lock()
		if l.hold != nil {
			l.endHold(ErrNotHeld)
		}
		l.mu.Unlock()
	}
}

// read returns the bytes at key (typ "string": a bucket), at field of key
// ("hash": a map) or whether field is a member of key ("set"), as this
// transaction will leave them: its own write, or else what Redis holds.
// The turn is held.
func (t *Transaction) read(ctx context.Context, o *base, key, field, typ string) ([]byte, bool, error) {
	if v, ok := t.buf.lookup(key, field); ok {
		return v.b, v.present, nil
	}
	t.c.trip(ctx, 1)
	var s string
	var err error
	switch typ {
	case "hash":
		s, err = t.c.rdb.HGet(ctx, key, field).Result()
	case "set":
		var in bool
		if in, err = t.c.rdb.SIsMember(ctx, key, field).Result(); err == nil && !in {
			err = redis.Nil
		}
		s = field
	default:
		s, err = t.c.rdb.Get(ctx, key).Result()
	}
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, o.wrap(err)
	}
	return []byte(s), true, nil
}

// buffer records a write of object o (see txBuffer.write); a key written
// as two Redis types in one transaction is ErrWrongType.
func (t *Transaction) buffer(o *base, key, typ, field string, v txValue, op string, args ...any) error {
	if !t.buf.write(key, typ, field, v, op, args...) {
		return o.errorf("%w: written as another type in this transaction", ErrWrongType)
	}
	return nil
}
