package redisson

import (
	"strconv"
	"sync"
	"time"
)

// lockKind is what differs between the lock handles: the plain reentrant
// Lock, the fair lock, and the read and write sides of a ReadWriteLock.
// Everything else (ownership, hold counting, idempotent calls, leases, the
// watchdog, waiting) is shared, and reads the kind only through these
// fields: no code asks which kind it has. plainLock, readLock and writeLock
// are here; fairLock is in fairlock.go.
type lockKind struct {
	what      string  // in errors: "lock", "fair lock", "read lock", "write lock"
	acquire   *script // KEYS [name, token or timeouts, channel]; ARGV [lease, field, count, pub, msg, extra...]
	release   *script // KEYS [name, channel, latch, extra...]; ARGV [field, count, lease, latch ttl, pub]
	force     *script
	forceArgs func(pub any) []any // ARGV of force, given the publish command
	state     *script
	renew     *script // batch renewal (the watchdog's, via holdRenewal) and Extend; per hold: key + renewArgs
	drop      *script // removes a stale field after a late renewal; nil: leave it to expire
	announce  bool    // a waiter's acquisition is announced on the channel

	// identify builds the identity of owner, whose field is field (the
	// owner plus suffix): the keys and arguments of its script calls, and
	// how it waits. Whatever a kind keeps per owner (a fair lock's queue, a
	// read lock's hold timeouts) is in the identity, not in Lock.
	identify func(c *Client, n lockNames, owner, field string) *identity
	suffix   string // appended to the owner to make its field: ":write"
	// decode reads the reply of state; false when it has not the kind's shape.
	decode func(res []int64) (lockState, bool)
	// shared: the kind's holds are shared (read holds): the goroutines
	// using one handle hold it at once, under one owner, and the handle has
	// no gate. The other kinds exclude them (see Lock).
	shared bool
	// queuePub is the acquire's pub argument for a subscribed waiter of a
	// kind that queues its waiters in Redis (fair lock: "wait", which joins
	// or stays in the queue); "" for a kind that does not.
	queuePub string
	// tellsNext: the acquire tells the queue's next waiter of a lease it has
	// not seen (fair lock): its msg argument is the publish command.
	tellsNext bool
	// queue returns the key of the kind's queue of waiters (its length is
	// QueueLength; ForceUnlock clears it); nil for a kind without one.
	queue func(name string) string
	// stackedLeases: each hold of the kind keeps a lease of its own in Redis
	// (a read hold's timeout key) and the owner holds until the longest
	// ends; a release drops the latest hold's lease. The handle follows the
	// same stack, so a re-entry with a shorter lease shortens nothing.
	stackedLeases bool
	// untokened: the kind's holds take no fencing token (read holds), so a
	// full release's latch is named by the owner and the hold's number
	// rather than by the latest token.
	untokened bool

	renewalOnce sync.Once
	renewalSpec *renewSpec // see holdRenewal
}

// holdRenewal returns the renewal spec the kind's holds give the watchdog,
// built once from what, suffix, renew and drop.
func (k *lockKind) holdRenewal() *renewSpec {
	k.renewalOnce.Do(func() {
		k.renewalSpec = &renewSpec{what: k.what, suffix: k.suffix, script: k.renew, drop: k.drop}
	})
	return k.renewalSpec
}

// lockNames are the keys of one lock, whoever owns it.
type lockNames struct {
	key      string // the lock's hash: its name
	channel  string // unlock channel
	tokenKey string // fencing counter
	// keys is the KEYS of the plain and write kinds' calls, built once
	// per handle and shared by its identities of those kinds.
	keys *baseKeys
}

// baseKeys are the KEYS of baseIdentity's calls, with their boxed forms
// for the command line (script.argv). The boxed slices are never
// modified; rel[2] is set per release to the latch, with the handle's mu
// held, as identity.relKeys[2] is.
type baseKeys struct {
	acq    []string // name, token, channel
	acqArg []any
	rel    []string // name, channel, latch
	relArg []any    // [2] is a placeholder: each release puts its latch in its own line
}

func newBaseKeys(name, tokenKey, channel string) *baseKeys {
	return &baseKeys{
		acq:    []string{name, tokenKey, channel},
		acqArg: []any{name, tokenKey, channel},
		rel:    []string{name, channel, ""},
		relArg: []any{name, channel, ""},
	}
}

// boxKeys returns keys boxed for a command line.
func boxKeys(keys []string) []any {
	a := make([]any, len(keys))
	for i, k := range keys {
		a[i] = k
	}
	return a
}

// identity is one owner of a lock, as its kind addresses it. It does not
// change once built: a handle that needs a new owner builds a new identity
// (except relKeys[2], which its Lock's mu guards).
type identity struct {
	owner      string   // "<client uuid>:<n>"; Lock.Owner
	field      string   // the owner's field in the lock hash
	fieldArg   any      // field, boxed once for script arguments
	acqKeys    []string // KEYS of acquire
	acqKeysArg []any    // acqKeys boxed, never modified
	acqExtra   []any    // kind-specific acquire arguments, never modified
	relKeys    []string // KEYS of release; [2] is set per call to the hold's latch key
	relKeysArg []any    // relKeys boxed, never modified ([2]: see release)
	renewExtra []any    // renewal arguments after the field
	// waitArg, when set, gives the last acquire argument from the caller's
	// wait (< 0: none): a fair waiter's queue allowance.
	waitArg func(wait time.Duration) any
	wait    waitSpec // channel, policy and strategy of this owner's waits
}

// baseIdentity is the identity of an owner of a plain lock (and of a write
// lock, whose field differs): acquire KEYS [name, token, channel], release
// KEYS [name, channel, latch], waits on the unlock channel.
func baseIdentity(n lockNames, owner, field string) *identity {
	return &identity{
		owner:      owner,
		field:      field,
		fieldArg:   field,
		acqKeys:    n.keys.acq,
		acqKeysArg: n.keys.acqArg,
		relKeys:    n.keys.rel,
		relKeysArg: n.keys.relArg,
		wait:       waitSpec{channel: n.channel, policy: lockWakePolicy},
	}
}

// tokenedIdentity is baseIdentity for a kind whose acquisitions take a
// fencing token: its acquire is also given the counter's idle lifetime.
func tokenedIdentity(c *Client, n lockNames, owner, field string) *identity {
	id := baseIdentity(n, owner, field)
	id.acqExtra = c.tokenExtra
	return id
}

// lockWakePolicy: the unlock message 0 hands the lock to one waiter (across
// clients, see internal/pubsub); the read-unlock message 1 (read-write locks)
// wakes all. Numbers n >= 2 are ours (Redisson ignores them) and announce a
// new hold: 2 by a caller that had not waited, n >= 3 by a waiter that
// waited n-3 milliseconds. Negative numbers are ours too (ignored by
// Redisson and by this library's versions before them): -1 - ms says that
// the holder's lease changed to ms (prelude_lease.lua), so every waiter
// tries again, which re-arms its wait's bound with the new lease.
func lockWakePolicy(payload string) wake {
	switch payload {
	case "0":
		return wake{n: 1, handoff: true}
	case "1":
		return wake{n: -1}
	}
	n, err := strconv.ParseInt(payload, 10, 64)
	switch {
	case err != nil:
	case n >= 2:
		return wake{taken: true, age: time.Duration(n-3) * time.Millisecond}
	case n < 0:
		return wake{n: -1}
	}
	return wake{ignored: true}
}

type lockState struct {
	locked bool
	count  int
	pttl   int64
}

// decodeLockState reads lock_state's {locked, count, pttl} (lock and fair
// lock).
func decodeLockState(res []int64) (lockState, bool) {
	if len(res) != 3 {
		return lockState{}, false
	}
	return lockState{locked: res[0] == 1, count: int(res[1]), pttl: res[2]}, true
}

// decodeRWState reads rw_state's {read held, write held, count, pttl}; the
// side is locked when anyone holds it.
func decodeRWState(write bool) func(res []int64) (lockState, bool) {
	return func(res []int64) (lockState, bool) {
		if len(res) != 4 {
			return lockState{}, false
		}
		locked := res[0] == 1 // read side: any read hold
		if write {
			locked = res[1] == 1
		}
		return lockState{locked: locked, count: int(res[2]), pttl: res[3]}, true
	}
}

var (
	plainLock = &lockKind{
		what:      "lock",
		acquire:   scriptLockAcquire,
		release:   scriptLockRelease,
		force:     scriptLockForce,
		forceArgs: func(pub any) []any { return []any{pub} },
		state:     scriptLockState,
		renew:     scriptLockRenew,
		drop:      scriptLockDrop,
		announce:  true,
		identify:  tokenedIdentity,
		decode:    decodeLockState,
	}
	readLock = &lockKind{
		what:          "read lock",
		acquire:       scriptRWReadAcquire,
		release:       scriptRWReadRelease,
		force:         scriptRWForce,
		forceArgs:     func(pub any) []any { return []any{"read", pub, "0"} },
		state:         scriptRWState,
		renew:         scriptRWReadRenew,
		identify:      readIdentity,
		decode:        decodeRWState(false),
		shared:        true,
		stackedLeases: true,
		untokened:     true,
	}
	writeLock = &lockKind{
		what:      "write lock",
		acquire:   scriptRWWriteAcquire,
		release:   scriptRWWriteRelease,
		force:     scriptRWForce,
		forceArgs: func(pub any) []any { return []any{"write", pub, "1"} },
		state:     scriptRWState,
		renew:     scriptLockRenew,
		drop:      scriptRWWriteDrop,
		announce:  true,
		identify:  tokenedIdentity,
		suffix:    ":write",
		decode:    decodeRWState(true),
	}
)

// readIdentity is a reader's identity: each read hold's lease is its own
// key under the owner's timeout prefix, which acquire takes in place of the
// fencing counter and release and renewal are given too; acquire also
// needs the owner's write field (a writer may take the read lock).
func readIdentity(_ *Client, n lockNames, owner, field string) *identity {
	id := baseIdentity(n, owner, field)
	timeouts := suffixName(n.key, owner+":rwlock_timeout")
	id.acqKeys = []string{n.key, timeouts, n.channel}
	id.relKeys = []string{n.key, n.channel, "", timeouts, rwKeyPrefix(n.key)}
	id.acqKeysArg, id.relKeysArg = boxKeys(id.acqKeys), boxKeys(id.relKeys)
	id.acqExtra = []any{owner + ":write"}
	id.renewExtra = []any{timeouts}
	id.wait.shared = true
	return id
}

// rwKeyPrefix is the prefix of every owner's read-hold timeout keys,
// "{name}" (or name itself when it has braces), as Redisson builds them.
func rwKeyPrefix(name string) string {
	s := suffixName(name, "x")
	return s[:len(s)-2]
}
