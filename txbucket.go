package redisson

import "context"

// TxBucket is a Bucket inside a Transaction (Redisson's
// RTransaction.getBucket): the same key and encoding as GetBucket's. Get
// reads Redis, or this transaction's own write; Set and Delete take the
// bucket's transaction lock ("<name>:transaction_lock") at the first write
// and are applied by Commit. It is safe for concurrent use (its calls take
// turns with the transaction's) and holds no state of its own.
type TxBucket[T any] struct {
	base
	tx   *Transaction
	lock string // the bucket's transaction lock
}

// GetTxBucket returns the bucket called name inside transaction tx, holding
// values of type T. It does no I/O. opts may give the bucket its own codec
// (WithCodec). An empty name makes every method return ErrEmptyName.
func GetTxBucket[T any](tx *Transaction, name string, opts ...ObjectOption) *TxBucket[T] {
	b := newBase(tx.c, bucketKind, name, tx.c.objectCodec(opts))
	b.opKind = transactionKind
	return &TxBucket[T]{base: b, tx: tx, lock: name + ":transaction_lock"}
}

// Name returns the bucket's name, its Redis key.
func (b *TxBucket[T]) Name() string { return b.name }

// Get returns the value the bucket has in this transaction: the one it
// wrote, or else the one in Redis (read without a lock), and whether there
// is one. It returns ErrCodec when the bytes do not decode into T,
// ErrTransactionDone after Commit or Rollback, ErrEmptyName,
// ErrWrongType, ErrClientClosed, or a Redis error.
func (b *TxBucket[T]) Get(ctx context.Context) (_ T, _ bool, err error) {
	ctx, rec, err := b.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero T
		return zero, false, err
	}
	return b.get(ctx, false)
}

// GetForUpdate is Get after taking the bucket's transaction lock (as a
// write does, waiting for it at most until the transaction's timeout):
// no other transaction can change the bucket until this one ends, so a
// value computed from it and Set loses no update. It returns Get's errors,
// and ErrTransactionTimeout when the lock was not free in time (the
// transaction is then rolled back), ctx.Err() (wrapped) when ctx ended
// while waiting, or ErrCrossSlot on Cluster (see Transaction).
func (b *TxBucket[T]) GetForUpdate(ctx context.Context) (_ T, _ bool, err error) {
	ctx, rec, err := b.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero T
		return zero, false, err
	}
	return b.get(ctx, true)
}

func (b *TxBucket[T]) get(ctx context.Context, lock bool) (T, bool, error) {
	var zero T
	if err := b.tx.enter(ctx); err != nil {
		return zero, false, err
	}
	defer b.tx.leave()
	if lock {
		if err := b.tx.lock(ctx, b.lock, b.name); err != nil {
			return zero, false, err
		}
	}
	raw, ok, err := b.tx.read(ctx, &b.base, b.name, "", "string")
	if err != nil || !ok {
		return zero, false, err
	}
	v, err := decodeValue[T](b.codec, b.object, raw)
	return v, err == nil, err
}

// Set makes Commit store v (with no expiry, as Bucket.Set), after taking
// the bucket's transaction lock. It returns ErrNilValue or ErrCodec for a
// v that does not encode (nothing locked), ErrTransactionTimeout,
// ErrCrossSlot and ctx.Err() as GetForUpdate does, ErrTransactionDone,
// ErrEmptyName, ErrClientClosed, or a Redis error.
func (b *TxBucket[T]) Set(ctx context.Context, v T) (err error) {
	ctx, rec, err := b.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	val, err := b.encode(v)
	if err != nil {
		return err
	}
	if err := b.tx.enter(ctx); err != nil {
		return err
	}
	defer b.tx.leave()
	if err := b.tx.lock(ctx, b.lock, b.name); err != nil {
		return err
	}
	return b.tx.buffer(&b.base, b.name, "string", "", txValue{val, true}, "set", string(val))
}

// Delete makes Commit delete the bucket, after taking its transaction
// lock, and reports whether the bucket exists in this transaction before
// the call. It returns Set's errors.
func (b *TxBucket[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := b.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	if err := b.tx.enter(ctx); err != nil {
		return false, err
	}
	defer b.tx.leave()
	if err := b.tx.lock(ctx, b.lock, b.name); err != nil {
		return false, err
	}
	_, ok, err := b.tx.read(ctx, &b.base, b.name, "", "string")
	if err != nil {
		return false, err
	}
	return ok, b.tx.buffer(&b.base, b.name, "string", "", txValue{}, "del")
}
