package redisson

import (
	"context"
	"errors"
)

// doLocked is the second half of Lock.Do and MultiLock.Do, once the hold is
// taken: it runs fn with hctx, the context carrying the hold (cancel is
// hctx's), and then releases the hold with unlock, whatever fn returned and
// even if fn panics (the panic goes on once the hold is released). unlock is
// always given hctx without its cancellation: hctx still carries the hold, so
// the release drops that hold only, and it is sent even though fn's context
// has been cancelled or the hold's loss cancelled it. It returns fn's error
// joined with unlock's.
func doLocked(hctx context.Context, cancel context.CancelFunc, fn func(context.Context) error, unlock func(context.Context) error) error {
	defer cancel()
	var fnErr error
	func() {
		defer func() {
			if p := recover(); p != nil {
				cancel()
				_ = unlock(context.WithoutCancel(hctx))
				panic(p)
			}
		}()
		fnErr = fn(hctx)
	}()
	cancel()
	return joinErrs(fnErr, unlock(context.WithoutCancel(hctx)))
}

// joinErrs returns a or b when the other is nil, both joined otherwise.
func joinErrs(a, b error) error {
	switch {
	case b == nil:
		return a
	case a == nil:
		return b
	}
	return errors.Join(a, b)
}
