// Package fencing is a toy resource protected by fencing tokens, for tests
// of what a distributed lock's tokens buy: an integer that clients
// read-modify-write, which refuses a request whose token is lower than the
// highest token it has seen.
package fencing

import (
	"errors"
	"sync"
)

// ErrStaleToken is returned for a request whose token is lower than one the
// resource has already seen.
var ErrStaleToken = errors.New("fencing: stale token")

// Resource is an integer register that checks fencing tokens. It is safe for
// concurrent use.
type Resource struct {
	checkReads bool

	mu       sync.Mutex
	value    int64
	highest  int64 // highest token seen by a checked request
	accepted int64 // writes accepted
}

// New returns a resource at 0. With checkReads, reads are fenced like
// writes: a read with a token lower than the highest seen is refused, and a
// read raises the highest token seen; without it only writes are checked
// (the usual advice), and reads are open to anyone.
func New(checkReads bool) *Resource { return &Resource{checkReads: checkReads} }

// Read returns the value for a client holding token; ErrStaleToken when
// reads are checked and the token is stale.
func (r *Resource) Read(token int64) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.checkReads {
		if token < r.highest {
			return 0, ErrStaleToken
		}
		r.highest = token
	}
	return r.value, nil
}

// Write sets the value for a client holding token; ErrStaleToken when the
// token is lower than the highest seen.
func (r *Resource) Write(token, v int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.highest {
		return ErrStaleToken
	}
	r.highest = token
	r.value = v
	r.accepted++
	return nil
}

// Value returns the value and the number of writes accepted.
func (r *Resource) Value() (value, accepted int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.value, r.accepted
}
