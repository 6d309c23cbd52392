package httplimit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/goredisson/redisson"
)

// run serves r through next as the run of its key: the lease renewed
// while next runs, the response buffered, then stored (or the key freed)
// before it is sent.
func (m *idempotency) run(w http.ResponseWriter, r *http.Request, next http.Handler, rec *redisson.IdempotencyRecord, token string) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	l := &runLease{m: m, r: r, rec: rec, token: token, lost: cancel}
	l.begin()
	cw := &captureWriter{w: w, header: http.Header{}, max: m.o.MaxResponse}
	finished := false
	defer func() {
		if !finished { // next panicked: free the key, let the panic go on
			l.stop()
			m.finish(r, rec, token, nil, nil)
		}
	}()
	next.ServeHTTP(cw, r.WithContext(ctx))
	finished = true
	l.stop()
	status := cw.status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case cw.spilled:
		m.finish(r, rec, token, nil, nil)
		m.o.OnError(r, fmt.Errorf("%w: more than %d bytes", ErrIdempotencyResponse, m.o.MaxResponse))
		return // already sent as written
	case context.Cause(ctx) == ErrIdempotencyLeaseLost:
		m.o.OnError(r, ErrIdempotencyLeaseLost) // not stored: another request may run it
	case status >= 500 && !m.o.StoreServerErrors:
		m.finish(r, rec, token, nil, nil)
	default:
		m.finish(r, rec, token, cw, &status)
	}
	cw.send(status)
}

// finish stores the response of the run (cw and status set) or frees its
// key (nil), off the request's context: a client that went away does not
// stop it.
func (m *idempotency) finish(r *http.Request, rec *redisson.IdempotencyRecord, token string, cw *captureWriter, status *int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), max(m.o.Timeout, releaseTimeout))
	defer cancel()
	var ok bool
	var err error
	if cw == nil {
		ok, err = rec.Abandon(ctx, token)
	} else {
		hdr, herr := json.Marshal(cw.header)
		if herr != nil { // a map of strings always marshals
			hdr = []byte("{}")
		}
		ok, err = rec.Complete(ctx, token, *status, hdr, cw.body.Bytes(), m.o.Retention)
	}
	switch {
	case err != nil:
		m.o.OnError(r, err) // the key frees itself when the lease ends
	case !ok:
		m.o.OnError(r, ErrIdempotencyLeaseLost)
	}
}

// replay writes a stored response.
func replay(w http.ResponseWriter, res redisson.IdempotencyResult) {
	var h http.Header
	if err := json.Unmarshal(res.Header, &h); err == nil {
		for k, v := range h {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(res.Status)
	w.Write(res.Body)
}
