package redisson

import (
	"context"
	"encoding/base64"
)

// TxSet is a Set inside a Transaction (Redisson's RTransaction.getSet): the
// same Redis set and encoding as GetSet's. Contains reads Redis, or this
// transaction's own writes; Add and Remove take the member's transaction
// lock ("{<set>}:<member id>:lock", the id computed as a map key's, as
// Redisson's RSet.getLock names it) at the member's first write and are
// applied by Commit. It is safe for concurrent use (its calls take turns
// with the transaction's) and holds no state of its own.
type TxSet[T any] struct {
	base
	tx *Transaction
}

// GetTxSet returns the set called name inside transaction tx, of members
// of type T. It does no I/O. opts may give the set its own codec
// (WithCodec). An empty name makes every method return ErrEmptyName.
func GetTxSet[T any](tx *Transaction, name string, opts ...ObjectOption) *TxSet[T] {
	b := newBase(tx.c, setKind, name, tx.c.objectCodec(opts))
	b.opKind = transactionKind
	return &TxSet[T]{base: b, tx: tx}
}

// Name returns the set's name, its Redis key.
func (s *TxSet[T]) Name() string { return s.name }

// Contains reports whether member is in the set in this transaction: its
// own writes, or else Redis (read without a lock). It returns ErrNilValue
// or ErrCodec for a member that does not encode, ErrTransactionDone after
// Commit or Rollback, ErrEmptyName, ErrWrongType, ErrClientClosed, or a
// Redis error.
func (s *TxSet[T]) Contains(ctx context.Context, member T) (_ bool, err error) {
	ctx, rec, err := s.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	m, err := s.encode(member)
	if err != nil {
		return false, err
	}
	if err := s.tx.enter(ctx); err != nil {
		return false, err
	}
	defer s.tx.leave()
	_, ok, err := s.tx.read(ctx, &s.base, s.name, string(m), "set")
	return ok, err
}

// Add makes Commit add member, after taking the member's transaction lock,
// and reports whether it was absent in this transaction (read under the
// lock). It returns ErrNilValue or ErrCodec for a member that does not
// encode (nothing locked), ErrTransactionTimeout when the lock was not
// free in time (the transaction is then rolled back), ctx.Err() (wrapped)
// when ctx ended while waiting, ErrCrossSlot on Cluster (see Transaction),
// ErrTransactionDone, ErrEmptyName, ErrWrongType, ErrClientClosed, or a
// Redis error.
func (s *TxSet[T]) Add(ctx context.Context, member T) (_ bool, err error) {
	ctx, rec, err := s.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	in, err := s.write(ctx, member, true)
	return !in && err == nil, err
}

// Remove makes Commit remove member, after taking its transaction lock, and
// reports whether it was present in this transaction. Add's errors.
func (s *TxSet[T]) Remove(ctx context.Context, member T) (_ bool, err error) {
	ctx, rec, err := s.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	return s.write(ctx, member, false)
}

// write locks member, reads whether it is in the set in this transaction,
// and buffers its addition (add) or removal.
func (s *TxSet[T]) write(ctx context.Context, member T, add bool) (bool, error) {
	m, err := s.encode(member)
	if err != nil {
		return false, err
	}
	if err := s.tx.enter(ctx); err != nil {
		return false, err
	}
	defer s.tx.leave()
	h := keyHash(m)
	lock := suffixName(s.name, base64.RawStdEncoding.EncodeToString(h[:])+":lock")
	if err := s.tx.lock(ctx, lock, s.name); err != nil {
		return false, err
	}
	_, in, err := s.tx.read(ctx, &s.base, s.name, string(m), "set")
	if err != nil {
		return false, err
	}
	if add {
		err = s.tx.buffer(&s.base, s.name, "set", string(m), txValue{m, true}, "sadd", string(m))
	} else {
		err = s.tx.buffer(&s.base, s.name, "set", string(m), txValue{}, "srem", string(m))
	}
	return in, err
}
