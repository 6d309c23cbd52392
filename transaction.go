package redisson

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

const transactionKind = "transaction"

// DefaultTransactionTimeout is a Transaction's timeout when
// TransactionOptions.Timeout is 0: Redisson's TransactionOptions default.
const DefaultTransactionTimeout = 5 * time.Second

// Errors of Transaction.
var (
	// ErrTransactionDone is returned by every call on a Transaction, and on
	// the objects it handed out, after its Commit or Rollback (or after a
	// call that ended it with ErrTransactionTimeout). Nothing is sent.
	ErrTransactionDone = errors.New("redisson: transaction already committed or rolled back")

	// ErrTransactionTimeout is returned when a Transaction outlived its
	// timeout: a write whose lock could not be taken within the time left
	// (another transaction holds it; two transactions waiting for each
	// other's locks both end this way), or a Commit after the timeout or
	// finding one of the transaction's locks lost (its lease, the
	// timeout, ran out). The transaction is then rolled back: none of its
	// writes is applied and its locks are released.
	ErrTransactionTimeout = errors.New("redisson: transaction timed out")
)

// TransactionOptions configure a Transaction.
type TransactionOptions struct {
	// Timeout bounds the transaction from its creation: each lock it takes
	// has this lease, a write waits for a lock at most until the timeout,
	// and Commit after it is refused with ErrTransactionTimeout. 0 means
	// DefaultTransactionTimeout (5s, Redisson's default); a negative value
	// is ErrNegativeDuration.
	Timeout time.Duration
}

// Transaction is Redisson's RTransaction, over Buckets, Maps, Sets,
// LocalCachedMaps and MapCaches (GetTxBucket, GetTxMap, GetTxSet,
// GetTxLocalCachedMap, GetTxMapCache): reads go straight to Redis (a key
// this transaction wrote reads as written: read-your-writes); writes are
// buffered and applied by Commit all at once, or not at all. The first
// write to a bucket, map key or set member takes a lock on it, as Redisson
// does, so that two transactions writing the same one, in this library or
// in Java, exclude each other: a bucket's lock is the hash
// "<name>:transaction_lock", a map key's (or set member's)
// "{<name>}:<key id>:lock" (the key id of the multimaps), the field
// "<client uuid>:<owner number>:<transaction id>", the lease the
// transaction's timeout. GetForUpdate takes the same lock before reading,
// so that a read-modify-write (a transfer between two accounts) loses no
// update: take the locks in one order everywhere (by name), or two
// transactions may wait for each other until their timeout.
//
// Commit is one script that checks that every lock is still held, applies
// the writes in their order and releases the locks (publishing Redisson's
// unlock message 0 on each lock's channel); Redisson sends the same writes
// and unlocks in one MULTI ... EXEC, which cannot refuse a commit whose
// lock was lost. Writes outside transactions, and reads, are not excluded.
// On Redis Cluster every key of a transaction (data keys and lock keys)
// must be in one slot: name its objects with one {hash tag}; a write that
// adds another slot is ErrCrossSlot and changes nothing.
//
// A Transaction is safe for concurrent use: its calls take turns.
type Transaction struct {
	base    // kind: transaction; name: its id
	timeout time.Duration
	start   time.Time
	field   string        // owner field of its locks
	turn    chan struct{} // one call at a time
	buf     txBuffer
}

// CreateTransaction starts a transaction. It does no I/O. It returns
// ErrNegativeDuration for a negative Timeout, or ErrClientClosed.
func (c *Client) CreateTransaction(opts TransactionOptions) (*Transaction, error) {
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("%w: transaction timeout %v", ErrNegativeDuration, opts.Timeout)
	}
	if c.closed.Load() {
		return nil, ErrClientClosed
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTransactionTimeout
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	t := &Transaction{
		base:    newBase(c, transactionKind, id, nil),
		timeout: opts.Timeout,
		start:   time.Now(),
		field:   c.newOwner() + ":" + id,
		turn:    make(chan struct{}, 1),
	}
	t.buf.init()
	return t, nil
}

// ID returns the transaction's id: 32 hex digits, the last part of its
// locks' field.
func (t *Transaction) ID() string { return t.name }

// enter waits for the transaction's turn (or ctx) and checks that it is
// still open; leave gives the turn back.
func (t *Transaction) enter(ctx context.Context) error {
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		return t.errorf("%w", ctx.Err())
	}
	if t.buf.done {
		<-t.turn
		return t.errorf("%w", ErrTransactionDone)
	}
	return nil
}

func (t *Transaction) leave() { <-t.turn }

// Commit applies the transaction's writes and releases its locks, in one
// script call, and ends the transaction. A transaction without writes ends
// without I/O. It returns ErrTransactionTimeout when the timeout passed or
// a lock was lost (nothing applied, the locks released), ErrWrongType when
// a written key holds another Redis type (nothing applied, the locks
// released), ErrTransactionDone after Commit or Rollback, ctx.Err()
// (wrapped) when ctx ended before the call was sent (the transaction stays
// open: Commit again, or Rollback), ErrClientClosed, or a Redis error. A
// call whose reply was lost is sent once more: the commit's latch makes the
// second one report a commit the first applied; when that fails too the
// error is returned and the outcome is unknown (all the writes or none; the
// locks end with their lease).
func (t *Transaction) Commit(ctx context.Context) (err error) {
	ctx, rec, err := t.open(ctx, opTxCommit)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	if err := t.enter(ctx); err != nil {
		return err
	}
	defer t.leave()
	return t.commit(ctx)
}

// Rollback releases the transaction's locks, applies none of its writes
// and ends the transaction. It still runs when ctx is already cancelled,
// within the client's CleanupTimeout. A lock it could not release ends
// with its lease; its error is returned (joined). It returns
// ErrTransactionDone after Commit or Rollback.
func (t *Transaction) Rollback(ctx context.Context) (err error) {
	ctx, rec, err := t.open(ctx, opTxRollback)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	ctx, cancel := t.cleanupCtx(ctx)
	defer cancel()
	if err := t.enter(ctx); err != nil {
		return err
	}
	defer t.leave()
	return t.rollback(ctx)
}

// cleanupCtx returns ctx, or when it has ended a context that outlives it
// by the client's CleanupTimeout.
func (t *Transaction) cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), t.c.opts.CleanupTimeout)
}

// rollback releases every lock and ends the transaction; the turn is held.
func (t *Transaction) rollback(ctx context.Context) error {
	t.buf.done = true
	var errs []error
	for _, l := range t.buf.locks {
		l.mu.Lock()
		if l.hold != nil {
			if err := l.unlock(ctx); err != nil && !errors.Is(err, ErrNotHeld) {
				errs = append(errs, err)
			}
		}
		l.mu.Unlock()
	}
	return errors.Join(errs...)
}

// timedOut rolls the transaction back and returns ErrTransactionTimeout
// with why; the turn is held.
func (t *Transaction) timedOut(ctx context.Context, why string) error {
	ctx, cancel := t.cleanupCtx(ctx)
	defer cancel()
	rerr := t.rollback(ctx)
	return errors.Join(t.errorf("%w: %s", ErrTransactionTimeout, why), rerr)
}

// lock takes the transaction's lock called name (once: a second write to
// the same object or key finds it held), waiting at most until the
// transaction's timeout. keys are the data keys the write will touch, for
// the Cluster slot check; the turn is held.
func (t *Transaction) lock(ctx context.Context, name string, keys ...string) error {
	if t.buf.held(name) {
		return nil
	}
	if err := t.buf.sameSlot(t, name, keys...); err != nil {
		return err
	}
	left := t.timeout - time.Since(t.start)
	if left <= 0 {
		return t.timedOut(ctx, fmt.Sprintf("%v passed before locking %q", t.timeout, name))
	}
	l := t.c.newLock(txLock, name, prefixName("redisson_lock__channel", name), t.field)
	ok, err := l.tryLock(ctx, left, t.timeout, nil)
	if err != nil {
		return err
	}
	if !ok {
		return t.timedOut(ctx, fmt.Sprintf("lock %q not free within the %v timeout", name, t.timeout))
	}
	t.buf.addLock(name, l)
	return nil
}
