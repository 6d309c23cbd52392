package httplimit

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// Lost replies: the reply of the script that lets the first request run,
// and then the one that stores its response, are dropped (the server ran
// them; go-redis reads EOF and resends them on a new connection). The
// resent begin is recognised as the same call (it runs, once), the resent
// store stores the same response again, and every later request replays
// it: one run, no error.
func TestIdempotencyLostRepliesRunOnce(t *testing.T) {
	srv := redistest.Shared(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1})
	t.Cleanup(func() { rdb.Close() })
	c, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var errs atomic.Int64
	var runs atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		proxy.DropNextReply() // the store's reply, next on the idle connection
		w.Write([]byte("done"))
	})
	_, admin := newRedisson(t)
	mw := mustIdempotency(t, c, concName(t, admin), &IdempotencyOptions{Conflict: true, OnError: func(_ *http.Request, err error) {
		t.Logf("OnError: %v", err)
		errs.Add(1)
	}}, h)
	// Warm: the scripts loaded, the publish mode known, on one connection.
	serveReq(mw, idemReq("POST", "/", "warm", ""))
	runs.Store(0)
	before := proxy.Dropped()
	proxy.DropNextReply() // the begin's reply
	if w := serveReq(mw, idemReq("POST", "/", "k", "")); w.Code != http.StatusOK || w.Body.String() != "done" {
		t.Fatalf("first: %d %q", w.Code, w.Body)
	}
	if got := proxy.Dropped() - before; got != 2 {
		t.Fatalf("%d replies dropped, want 2", got)
	}
	for range 3 {
		if w := serveReq(mw, idemReq("POST", "/", "k", "")); w.Code != http.StatusOK || w.Body.String() != "done" {
			t.Fatalf("replay: %d %q", w.Code, w.Body)
		}
	}
	if runs.Load() != 1 || errs.Load() != 0 {
		t.Errorf("runs %d, errors %d; want 1, 0", runs.Load(), errs.Load())
	}
}

// CLIENT KILL of every connection of the middleware's client while the
// handler runs: its renewals and the store reconnect, the handler ran once
// and the response is replayed.
func TestIdempotencyClientKillDuringRun(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	admin := srv.Client(t)
	c, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var runs atomic.Int64
	var killed atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		for range 3 { // across several renewals (one each 200ms)
			n, err := admin.ClientKillByFilter(context.Background(), "TYPE", "normal", "SKIPME", "yes").Result()
			if err != nil {
				t.Error(err)
			}
			killed.Add(n)
			select {
			case <-r.Context().Done():
				t.Errorf("run's context ended: %v", context.Cause(r.Context()))
				return
			case <-waitFor(250):
			}
		}
		w.Write([]byte("done"))
	})
	var mu sync.Mutex
	var errs []error
	mw := mustIdempotency(t, c, "killed", &IdempotencyOptions{Lease: 600 * time.Millisecond, OnError: func(_ *http.Request, err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}}, h)
	for range 3 {
		if w := serveReq(mw, idemReq("POST", "/", "k", "")); w.Code != http.StatusOK || w.Body.String() != "done" {
			t.Fatalf("%d %q", w.Code, w.Body)
		}
	}
	if runs.Load() != 1 || killed.Load() == 0 {
		t.Errorf("runs %d, connections killed %d; want 1 run and some killed", runs.Load(), killed.Load())
	}
	t.Logf("connections killed %d, errors reported %v", killed.Load(), errs)
}
