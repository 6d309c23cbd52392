package httplimit

import (
	"context"
	"net/http"

	"github.com/goredisson/redisson"
)

// runLease renews a run's lease each third of it while the handler runs;
// a renewal that finds the lease gone cancels the run's context with
// ErrIdempotencyLeaseLost.
type runLease struct {
	m     *idempotency
	r     *http.Request
	rec   *redisson.IdempotencyRecord
	token string
	lost  context.CancelCauseFunc
	renewer
}

// begin starts the renewals; one that finds the lease gone cancels the
// run.
func (l *runLease) begin() {
	l.renewer = renewer{r: l.r, every: l.m.o.Lease / 3, onErr: l.m.o.OnError,
		call: func(ctx context.Context) (bool, error) {
			ok, err := l.rec.Renew(ctx, l.token, l.m.o.Lease)
			if err == nil && !ok {
				l.lost(ErrIdempotencyLeaseLost)
			}
			return ok, err
		}}
	l.start()
}
