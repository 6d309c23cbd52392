package httplimit

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// renewer renews a lease every period while request r runs (a permit's,
// an idempotency run's), on a timer, so a short request starts no
// goroutine for it, until call reports false (nothing left to renew) or
// stop is called. An error goes to onErr, and the next renewal tries
// again, while the lease lasts.
type renewer struct {
	r     *http.Request
	every time.Duration
	call  func(ctx context.Context) (bool, error)
	onErr func(r *http.Request, err error)

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

// start arms the next renewal.
func (x *renewer) start() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.done {
		x.timer = time.AfterFunc(x.every, x.renew)
	}
}

// renew makes one renewal, bounded off the request's context, and arms
// the next.
func (x *renewer) renew() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.r.Context()), min(releaseTimeout, x.every))
	defer cancel()
	ok, err := x.call(ctx)
	if err != nil {
		x.onErr(x.r, err)
	} else if !ok {
		return
	}
	x.start()
}

// stop ends the renewals (one running finishes on its own).
func (x *renewer) stop() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.done = true
	if x.timer != nil {
		x.timer.Stop()
	}
}
