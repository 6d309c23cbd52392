package httplimit

import (
	"context"
	"net/http"

	"github.com/goredisson/redisson"
)

// permit is one request's permit of a concurrency limit: renewed each
// third of the lease while the request runs, released once it returns, off
// its path.
type permit struct {
	m   *concurrency
	r   *http.Request
	sem *redisson.PermitExpirableSemaphore
	id  string
	renewer
}

// renewLater starts the renewals of the permit's lease.
func (p *permit) renewLater() {
	p.renewer = renewer{r: p.r, every: p.m.o.Lease / 3, onErr: p.m.o.OnError,
		call: func(ctx context.Context) (bool, error) { return p.sem.UpdateLease(ctx, p.id, p.m.o.Lease) }}
	p.start()
}

// release stops the renewals and gives the permit back on a goroutine of
// its own: the permit stays taken a little longer than the request, never
// shorter, so the limit holds.
func (p *permit) release() {
	p.stop()
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.r.Context()), releaseTimeout)
		defer cancel()
		if err := p.sem.Release(ctx, p.id); err != nil {
			p.m.o.OnError(p.r, err) // the permit comes back when its lease ends
		}
	}()
}
