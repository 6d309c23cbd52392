package redisson

import "time"

// WriteBehind configures a write-behind Writer (WithWriteBehind). The
// zero value is BatchSize 50, Delay 1s, QueueSize 10000, blocking when
// full, retrying until Close gives up, and a CloseTimeout of 30s.
type WriteBehind struct {
	// BatchSize is the most keys one Write or Delete call is given; a
	// full batch is written at once. Default 50 (Redisson's
	// writeBehindBatchSize).
	BatchSize int
	// Delay is how long a queued key waits at most before its batch is
	// written. Default 1s (Redisson's writeBehindDelay).
	Delay time.Duration
	// QueueSize bounds the keys queued and being written (the latest
	// write of a queued key replaces the queued one and takes no room).
	// Default 10000.
	QueueSize int
	// FailWhenFull makes a write that finds the queue full return
	// ErrWriteBehindFull (the map itself was written) instead of blocking
	// until there is room or its context ends.
	FailWhenFull bool
	// MaxAttempts is how many times a failing batch is tried before it is
	// dropped (EventWriteBehindDropped); 0 (the default) tries until it
	// succeeds or Close gives up. Failures back off from 100ms doubling to
	// 10s.
	MaxAttempts int
	// CloseTimeout bounds how long Close (LocalCachedMap.Close,
	// Client.Close) keeps writing the queue out. Default 30s.
	CloseTimeout time.Duration
}

const (
	defaultWriteBatch   = 50
	defaultWriteDelay   = time.Second
	defaultWriteQueue   = 10000
	defaultWriteTimeout = 30 * time.Second
)
