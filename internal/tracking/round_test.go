package tracking

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// With Nodes, every listed node gets a tracking connection: a write on
// any of them invalidates, the loss of any one drops the keys of all and
// re-creates every connection, and a change of the list does the same;
// while the list cannot be had, nothing is stored and the failure is
// reported once.
func TestNodesTrackedTogether(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ra, rb := a.Client(t), b.Client(t)
	ctx := redistest.Ctx(t, 30*time.Second)
	var nodes atomic.Pointer[[]string]
	var events atomic.Int32
	nodesErr := errors.New("no list")
	c := New(Config{
		Server:      &redis.Options{}, // each node's Addr is set per connection
		MaxEntries:  1000,
		HealthCheck: 100 * time.Millisecond,
		Prefixes:    []string{"trk:"},
		Event:       func(string, error) { events.Add(1) },
		Nodes: func(context.Context) ([]string, error) {
			if p := nodes.Load(); p != nil {
				return *p, nil
			}
			return nil, nodesErr
		},
	})
	t.Cleanup(c.Close)
	time.Sleep(300 * time.Millisecond)
	if c.Stats().Live || c.Begin("trk:x", "").s != nil || events.Load() != 1 {
		t.Fatalf("live %v, events %d without a list of nodes", c.Stats().Live, events.Load())
	}
	both := []string{b.Addr(), a.Addr()}
	nodes.Store(&both)
	redistest.Eventually(t, 10*time.Second, "live on both", func() bool { return c.Stats().Live && c.Connections() == 2 })

	ka, kb := testKey(t), testKey(t)
	ra.Set(ctx, ka, "a1", 0)
	rb.Set(ctx, kb, "b1", 0)
	cacheIt(t, ctx, c, ra, ka, "a1")
	cacheIt(t, ctx, c, rb, kb, "b1")
	rb.Set(ctx, kb, "b2", 0) // a write on the second node
	redistest.Eventually(t, 10*time.Second, "invalidated by the second node", func() bool {
		_, ok := c.Get(kb, "")
		return !ok
	})
	cacheIt(t, ctx, c, rb, kb, "b2")

	inFlight := c.Begin(ka, "")
	killTracking(t, ctx, rb) // the second node's connection: the first node's keys go too
	redistest.Eventually(t, 10*time.Second, "flushed", func() bool {
		_, okA := c.Get(ka, "")
		_, okB := c.Get(kb, "")
		return !okA && !okB
	})
	if inFlight.Store("a1", true) {
		t.Fatal("a read begun before the loss stored")
	}
	redistest.Eventually(t, 10*time.Second, "both re-created", func() bool { return c.Stats().Live && c.Connections() == 4 })

	cacheIt(t, ctx, c, ra, ka, "a1")
	one := []string{a.Addr()}
	nodes.Store(&one)
	redistest.Eventually(t, 10*time.Second, "re-created on the new list", func() bool {
		_, ok := c.Get(ka, "")
		return !ok && c.Stats().Live && c.Connections() == 5
	})
	cacheIt(t, ctx, c, ra, ka, "a1")
}
