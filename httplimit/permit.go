package httplimit

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/goredisson/redisson"
)

// permit is one request's permit of a concurrency limit: renewed each
// third of the lease while the request runs (a timer, so a short request
// starts no goroutine for it), released once it returns, off its path.
type permit struct {
	m   *concurrency
	r   *http.Request
	sem *redisson.PermitExpirableSemaphore
	id  string

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

// renewLater arms the next renewal.
func (p *permit) renewLater() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.timer = time.AfterFunc(p.m.o.Lease/3, p.renew)
	}
}

// renew extends the permit's lease to Lease from now, and arms the next
// renewal.
func (p *permit) renew() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.r.Context()), min(releaseTimeout, p.m.o.Lease/3))
	defer cancel()
	ok, err := p.sem.UpdateLease(ctx, p.id, p.m.o.Lease)
	switch {
	case err != nil:
		p.m.o.OnError(p.r, err) // the next renewal tries again, while the lease lasts
	case !ok:
		return // the lease ran out (or the permit was released): nothing left to renew
	}
	p.renewLater()
}

// release stops the renewals and gives the permit back on a goroutine of
// its own: the permit stays taken a little longer than the request, never
// shorter, so the limit holds.
func (p *permit) release() {
	p.mu.Lock()
	p.done = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.r.Context()), releaseTimeout)
		defer cancel()
		if err := p.sem.Release(ctx, p.id); err != nil {
			p.m.o.OnError(p.r, err) // the permit comes back when its lease ends
		}
	}()
}
