package redissontest

import (
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// clockTick is how often an Embedded server's clock is moved forward.
const clockTick = 10 * time.Millisecond

// Embedded is an embedded Redis (miniredis) whose clock follows real time:
// keys with a TTL expire after that much real time, to within 10 ms. The
// embedded *miniredis.Miniredis gives its inspection and control methods
// (Keys, TTL, FastForward to move the clock further ahead, ...).
//
// An Embedded is safe for concurrent use. Close stops it; closing it twice
// is harmless.
type Embedded struct {
	*miniredis.Miniredis
	stop  chan struct{}
	wg    sync.WaitGroup
	close sync.Once
}

// StartEmbedded starts an Embedded server on a free loopback port, for
// programs; tests use NewEmbedded. The caller must call Close, which stops
// the goroutine that moves the clock.
func StartEmbedded() (*Embedded, error) {
	m, err := miniredis.Run()
	if err != nil {
		return nil, err
	}
	e := &Embedded{Miniredis: m, stop: make(chan struct{})}
	e.wg.Go(func() {
		tick := time.NewTicker(clockTick)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-e.stop:
				return
			case now := <-tick.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	})
	return e, nil
}

// NewEmbedded starts an Embedded server and returns it with a go-redis
// client connected to it. Both are closed by t.Cleanup when the test ends;
// a server that cannot start fails the test.
func NewEmbedded(t testing.TB) (*Embedded, *redis.Client) {
	t.Helper()
	e, err := StartEmbedded()
	if err != nil {
		t.Fatalf("redissontest: start miniredis: %v", err)
	}
	t.Cleanup(e.Close)
	rdb := e.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	return e, rdb
}

// NewClient returns a new go-redis client of the server. The caller closes
// it. (It sets DisableIdentity: miniredis does not know CLIENT SETINFO.)
func (e *Embedded) NewClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: e.Addr(), DisableIdentity: true})
}

// Close stops the clock goroutine, waits for it, and stops the server.
func (e *Embedded) Close() {
	e.close.Do(func() {
		close(e.stop)
		e.wg.Wait()
		e.Miniredis.Close()
	})
}
