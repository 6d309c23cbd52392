package redisson

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hold is one owner's hold of a lock, from the acquisition that took the
// hold count from 0 to 1 until Unlock or loss. It is shared by the lock handle
// and, for watchdog leases, the watchdog.
type hold struct {
	renewal *renewSpec    // how the watchdog renews it, and names it in events
	taken   time.Duration // when the acquisition that took it was sent, since epoch
	key     string        // lock key
	field   string        // owner field
	channel string        // unlock channel
	slot    int           // hash slot of key, on Cluster
	seq     uint64        // unique within the client
	pub     any           // with renewal.drop: the publish command (drop nil: a stale field is left to expire)
	// renewArgs are the hold's arguments to renewal.script after the lease;
	// they live in renewBuf when they fit (no allocation of their own).
	renewArgs []any
	renewBuf  [2]any
	done      chan struct{}
	once      sync.Once
	err       error // why the hold ended; written once before done closes
	// onEnd, when set, is called once the hold has ended (done closed),
	// with its cause: an Election's report of a leadership's end.
	onEnd atomic.Pointer[func(error)]

	// Owned by the Lock's mutex.
	watched  bool        // kept alive by the watchdog
	timer    *time.Timer // not watched: ends the hold at its lease deadline
	deadline time.Time   // the timer's deadline

	// Guarded by watchdog.mu.
	expires time.Time // monotonic lease deadline known to this client
	expired bool      // ended by the watchdog at expires, without an answer
}

// renewSpec is what the watchdog needs to renew the holds of one kind of
// lock, and to name them in events. The lock gives it to every hold it
// starts (with the hold's own renewArgs and pub), so that the watchdog
// knows no lock kind. It is shared by the holds and never modified.
type renewSpec struct {
	what   string  // the lock's kind, in events
	suffix string  // what follows the owner in the hold's field
	script *script // renews a batch: KEYS [key...]; ARGV [lease, each hold's renewArgs...]
	// drop removes a stale field a late renewal kept alive: KEYS [key,
	// channel]; ARGV [field, pub]. nil: the field is left to expire.
	drop *script
}

func newHold(key, field, channel string, slot int) *hold {
	return &hold{key: key, field: field, channel: channel, slot: slot, done: make(chan struct{})}
}

// end closes the hold with cause err; later calls do nothing. It reports
// whether this call ended it.
func (h *hold) end(err error) bool {
	ended := false
	h.once.Do(func() {
		h.err = err
		close(h.done)
		ended = true
	})
	if ended {
		if f := h.onEnd.Load(); f != nil {
			(*f)(err)
		}
	}
	return ended
}

// whenEnded makes f be called once h has ended, with its cause: at once
// when it has already. f may be called twice when h ends meanwhile; it
// must tolerate that.
func (h *hold) whenEnded(f func(error)) {
	h.onEnd.Store(&f)
	if ended, err := h.ended(); ended {
		f(err)
	}
}

// epoch is the origin of hold.taken (a Duration keeps the hold small).
var epoch = time.Now()

// since returns when the acquisition that took h was sent.
func (h *hold) since() time.Time { return epoch.Add(h.taken) }

// what returns the lock's kind and owner, for events.
func (h *hold) what() (kind, owner string) {
	if h.renewal == nil {
		return "", h.field
	}
	return h.renewal.what, strings.TrimSuffix(h.field, h.renewal.suffix)
}

// lose ends h with ErrLeaseLost, reporting the loss (cause says how it was
// found, late how long after the lease deadline known here) through em.
func (h *hold) lose(em *emitter, cause string, late time.Duration) {
	if h.end(ErrLeaseLost) {
		kind, owner := h.what()
		em.emit(Event{Type: EventLeaseLost, Kind: kind, Name: h.key, Owner: owner, Late: max(late, 0),
			Err: fmt.Errorf("%w: %s", ErrLeaseLost, cause)})
	}
}

// The causes of a lost lease, in events.
const (
	lostGone    = "renewal found the lock gone or held by another owner"
	lostOverdue = "no renewal confirmed before the lease deadline"
	lostTimer   = "the lease ran out before Unlock"
	lostFound   = "an acquisition found the hold gone from Redis"
)

// ended reports whether the hold has ended, and why.
func (h *hold) ended() (bool, error) {
	select {
	case <-h.done:
		return true, h.err
	default:
		return false, nil
	}
}

// lossMargin is how long before its lease deadline (as measured by this
// client, from before the call that set it) a hold is reported lost: a
// twentieth of the lease, so that timer and scheduling delays here do not
// let another owner acquire before the holder is told.
func lossMargin(lease time.Duration) time.Duration { return lease / 20 }
