package redisson

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// cscClusterRegisters returns n cached buckets under "csc:" whose keys are
// served by n different masters of cl, each with its history (its initial
// own write recorded), and the masters' addresses.
func cscClusterRegisters(t *testing.T, ctx context.Context, cl *redistest.Cluster, c *Client, raw redis.UniversalClient, n int) ([]*Bucket[string], []register, []*cscHistory, []string) {
	t.Helper()
	var bs []*Bucket[string]
	var regs []register
	var hs []*cscHistory
	var owners []string
	for i := 0; len(bs) < n && i < 1000; i++ {
		name := "csc:cluster-" + strconv.Itoa(i)
		owner := cl.SlotOwner(t, c.slot(name))
		if slices.Contains(owners, owner) {
			continue
		}
		b := GetBucket[string](c, name, WithCodec(StringCodec{}), WithClientSideCaching())
		h := &cscHistory{}
		inv := history.Now()
		if err := b.Set(ctx, "own-init"); err != nil {
			t.Fatal(err)
		}
		h.write(history.Write{Value: "own-init", Own: true, Invoke: inv, Return: history.Now()})
		bs, hs, owners = append(bs, b), append(hs, h), append(owners, owner)
		regs = append(regs, bucketRegister(b, raw))
	}
	if len(bs) < n {
		t.Fatalf("found keys on %d masters only", len(bs))
	}
	return bs, regs, hs, owners
}

// cscHitsEverywhere checks that each bucket's value is served from the
// cache: the master serving its key is tracked.
func cscHitsEverywhere(t *testing.T, ctx context.Context, c *Client, bs []*Bucket[string]) {
	t.Helper()
	for _, b := range bs {
		eventually(t, 10*time.Second, "a hit on "+b.Name(), func() bool {
			if _, _, err := b.Get(ctx); err != nil {
				return false
			}
			before := cacheHits(c)
			_, _, err := b.Get(ctx)
			return err == nil && cacheHits(c) > before
		})
	}
}

// cscForeignWritesSeen checks, for each bucket in turn, that once its
// value is served from the cache a foreign write of its key (raw, a plain
// go-redis Cluster client) is seen within staleWindow: the master serving
// the key reports its writes.
func cscForeignWritesSeen(t *testing.T, ctx context.Context, c *Client, raw redis.UniversalClient, bs []*Bucket[string]) {
	t.Helper()
	cscHitsEverywhere(t, ctx, c, bs)
	for _, b := range bs {
		cscHitsEverywhere(t, ctx, c, []*Bucket[string]{b})
		v := "raw-final-" + b.Name()
		if err := raw.Set(ctx, b.Name(), v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for {
			got, _, err := b.Get(ctx)
			if err == nil && got == v {
				break
			}
			if time.Since(start) > staleWindow {
				t.Fatalf("%s: foreign write not seen after %v (read %q, %v)", b.Name(), staleWindow, got, err)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// On a 3-master Cluster, reads through cached buckets whose keys are on
// the three masters, against writes by the library, a plain go-redis
// Cluster client and redis-cli -c, while every master's tracking and
// pub/sub connections are killed and a slot moves between masters mid-run:
// no read returns a value replaced by an own write that had returned, nor
// one replaced by a foreign write more than staleWindow before the read
// began; every master's keys are served from the cache.
func TestClientSideCachingCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	_, cli := redistest.ServerPath(t)
	rdb := cl.Client(t)
	raw := cl.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, rdb, &Options{PubSubHealthCheck: 200 * time.Millisecond, ClientSideCaching: ClientSideCaching{Prefixes: []string{"csc:"}}})
	waitCacheLive(t, c)
	bs, regs, hs, owners := cscClusterRegisters(t, ctx, cl, c, raw, 3)
	cscHitsEverywhere(t, ctx, c, bs)
	_, port, _ := strings.Cut(cl.Addrs()[0], ":")
	cliArgs := func() []string { return []string{cli, "-c", "-p", port} }

	stop := make(chan struct{})
	var foreign []*atomic.Int64
	for i := range regs {
		foreign = append(foreign, runCSCWorkload(t, ctx, hs[i], regs[i], cliArgs, stop, nil))
	}
	kills := 0
	killAll := func() {
		for _, a := range owners {
			direct := redis.NewClient(&redis.Options{Addr: a})
			if kills%2 == 0 {
				kills += killTracking(ctx, direct)
			} else if direct.Do(ctx, "client", "kill", "type", "pubsub").Err() == nil {
				kills++
			}
			_ = direct.Close()
		}
	}
	for i := 0; i < 3; i++ {
		time.Sleep(300 * time.Millisecond)
		killAll()
	}
	conns := c.csc.Load().Connections()
	slot := c.slot(bs[0].Name())
	m := cl.BeginSlotMigration(t, slot, owners[1])
	time.Sleep(300 * time.Millisecond)
	moved := m.MoveKeys(t)
	time.Sleep(300 * time.Millisecond)
	m.Finish(t)
	t.Logf("slot %d moved %s -> %s (%d keys)", slot, m.From(), m.To(), moved)
	time.Sleep(500 * time.Millisecond)
	killAll()
	time.Sleep(500 * time.Millisecond)
	close(stop)
	time.Sleep(50 * time.Millisecond)
	for i, h := range hs {
		t.Logf("register %s (master %s, foreign reads %d)", bs[i].Name(), owners[i], foreign[i].Load())
		checkCSCHistory(t, h)
	}
	st := c.csc.Load().Stats()
	t.Logf("kills %d, tracking connections %d (%d before the migration), cache %+v", kills, c.csc.Load().Connections(), conns, st)
	if kills < 6 || c.csc.Load().Connections() < 9 || st.Flushes < 3 {
		t.Fatalf("kills %d, connections %d, flushes %d: the tracking connections were not lost and replaced", kills, c.csc.Load().Connections(), st.Flushes)
	}
	for i := range foreign {
		if foreign[i].Load() == 0 {
			t.Fatalf("register %d read no foreign value", i)
		}
	}
	cscForeignWritesSeen(t, ctx, c, raw, bs)
}

// Across a Cluster failover (CLUSTER FAILOVER, coordinated: no
// acknowledged write is lost), the cache tracks the new master: the
// history of reads against own and foreign writes on keys of every master
// stays within the window, and a write made on the new master directly is
// seen.
func TestClientSideCachingClusterFailover(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	rdb := cl.Client(t)
	raw := cl.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, rdb, &Options{PubSubHealthCheck: 200 * time.Millisecond})
	waitCacheLive(t, c)
	bs, regs, hs, owners := cscClusterRegisters(t, ctx, cl, c, raw, 3)
	stop := make(chan struct{})
	for i := range regs {
		runCSCWorkload(t, ctx, hs[i], regs[i], nil, stop, nil)
	}
	time.Sleep(300 * time.Millisecond)
	before := c.csc.Load().Connections()
	newMaster := cl.Failover(t, owners[0])
	t.Logf("failover %s -> %s", owners[0], newMaster)
	eventually(t, 30*time.Second, "tracking connections on the new masters", func() bool {
		return c.csc.Load().Connections() >= before+3 && c.csc.Load().Stats().Live
	})
	time.Sleep(time.Second)
	close(stop)
	time.Sleep(50 * time.Millisecond)
	for _, h := range hs {
		checkCSCHistory(t, h)
	}
	cscForeignWritesSeen(t, ctx, c, raw, bs)
	direct := redis.NewClient(&redis.Options{Addr: newMaster})
	defer direct.Close()
	if err := direct.Set(ctx, bs[0].Name(), "after-failover", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "write on the new master seen", func() bool {
		v, _, _ := bs[0].Get(ctx)
		return v == "after-failover"
	})
}
