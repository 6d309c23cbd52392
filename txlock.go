package redisson

// txLock is the kind of a Transaction's locks: Redisson's RLock as its
// RTransaction takes them (a lock hash whose field is
// "<client uuid>:<owner number>:<transaction id>", the unlock message 0 on
// redisson_lock__channel:{<lock>}), without the fencing counter of the
// plain kind. Its holds always have the transaction's timeout as lease, so
// the watchdog never renews them. Commit releases them inside tx_commit;
// Rollback, and a commit refused, with lock_release as the plain kind.
var txLock = &lockKind{
	what:      "transaction lock",
	acquire:   scriptTxLockAcquire,
	release:   scriptLockRelease,
	force:     scriptLockForce,
	forceArgs: func(pub any) []any { return []any{pub} },
	state:     scriptLockState,
	renew:     scriptLockRenew,
	drop:      scriptLockDrop,
	announce:  true,
	identify: func(_ *Client, n lockNames, owner, field string) *identity {
		return baseIdentity(n, owner, field)
	},
	decode:    decodeLockState,
	untokened: true,
}
