package redisson

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// TestLocalCachedMapServeStaleWhileDisconnected stops the redis-server for
// real (SIGKILL, then SIGSTOP): with ServeStaleFor the cached value is still
// served, reported stale, for at most ServeStaleFor after the loss was
// seen, and counted; without it (the default) nothing is served from the
// cache. Once the server is back, reads are fresh and not stale.
func TestLocalCachedMapServeStaleWhileDisconnected(t *testing.T) {
	for _, how := range []string{"kill", "pause"} {
		t.Run(how, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			ctx := testCtx(t, 2*time.Minute)
			c := newClient(t, rdb, &Options{PubSubHealthCheck: 100 * time.Millisecond})
			const window = 2 * time.Second
			stale := GetLocalCachedMap[string, string](c, "stale", LocalCacheOptions{ServeStaleFor: window})
			strict := GetLocalCachedMap[string, string](c, "strict", LocalCacheOptions{})
			defer stale.Close()
			defer strict.Close()
			waitLive(t, stale)
			waitLive(t, strict)
			for _, m := range []*LocalCachedMap[string, string]{stale, strict} {
				if _, err := m.FastPut(ctx, "k", "v1"); err != nil {
					t.Fatal(err)
				}
				if _, info, err := m.GetWithInfo(ctx, "k"); err != nil || !info.Cached || info.Stale {
					t.Fatalf("%s: GetWithInfo before the loss = %+v, %v; want cached, not stale", m.Name(), info, err)
				}
			}
			if how == "kill" {
				srv.Kill()
			} else {
				srv.Pause()
			}
			var first time.Time
			eventually(t, 20*time.Second, "the loss is seen and the value served stale", func() bool {
				v, info, err := stale.GetWithInfo(ctx, "k")
				if err == nil && info.Stale {
					first = time.Now()
					if v != "v1" || !info.Found || !info.Cached {
						t.Fatalf("stale read = %q, %+v", v, info)
					}
					return true
				}
				return false
			})
			if st := stale.CacheStats(); st.StaleServes == 0 || st.Hits < st.StaleServes {
				t.Fatalf("CacheStats = %+v; want stale serves counted among hits", st)
			}
			if c.Stats().Cache.StaleServes == 0 {
				t.Fatalf("Client Stats.Cache = %+v; want the stale serves", c.Stats().Cache)
			}
			// The default map serves nothing from its cache meanwhile.
			short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, info, err := strict.GetWithInfo(short, "k")
			cancel()
			if err == nil || info.Cached {
				t.Fatalf("the default map during the loss: %+v, %v; want an error, nothing from the cache", info, err)
			}
			// No longer than the window after the loss was seen.
			var staleFor time.Duration
			eventually(t, 20*time.Second, "stale serving ends after ServeStaleFor", func() bool {
				short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				_, info, _ := stale.GetWithInfo(short, "k")
				staleFor = max(staleFor, info.StaleFor)
				return !info.Stale
			})
			if d := time.Since(first); d > window+15*time.Second {
				t.Fatalf("served stale for %v after the first stale read, window %v", d, window)
			}
			if staleFor > window {
				t.Fatalf("a stale read reported StaleFor %v beyond the window %v", staleFor, window)
			}
			if how == "kill" {
				srv.Restart(t)
			} else {
				srv.Resume()
			}
			if _, err := GetLocalCachedMap[string, string](newClient(t, rdb, nil), "stale", LocalCacheOptions{}).FastPut(ctx, "k", "v2"); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, "fresh reads after the reconnection", func() bool {
				v, info, err := stale.GetWithInfo(ctx, "k")
				return err == nil && v == "v2" && !info.Stale
			})
		})
	}
}

// TestLocalCachedMapServeStaleBadOption: a negative ServeStaleFor is
// ErrInvalidOption.
func TestLocalCachedMapServeStaleBadOption(t *testing.T) {
	rdb := sharedRedis(t)
	m := GetLocalCachedMap[string, string](newClient(t, rdb, nil), uniqueName(t, rdb), LocalCacheOptions{ServeStaleFor: -time.Second})
	defer m.Close()
	if _, _, err := m.GetWithInfo(testCtx(t, time.Minute), "k"); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("err %v, want ErrInvalidOption", err)
	}
}
