package redisson

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// staleWindow is the lateness the history check allows a read after a
// foreign write returned: the documented window is the invalidation
// message's flight (well under a millisecond here), plus, after a lost
// tracking connection, the time to notice it (at once for a killed one).
// The bound is wide for a loaded machine; the lateness seen is logged.
const staleWindow = time.Second

// cscHistory records a register's writes and reads.
type cscHistory struct {
	mu     sync.Mutex
	writes []history.Write
	reads  []history.Read
}

func (h *cscHistory) write(w history.Write) {
	h.mu.Lock()
	h.writes = append(h.writes, w)
	h.mu.Unlock()
}
func (h *cscHistory) read(r history.Read) { h.mu.Lock(); h.reads = append(h.reads, r); h.mu.Unlock() }

// register is what the workload reads and writes: a cached bucket, or one
// entry of a cached map.
type register struct {
	get    func(ctx context.Context) (string, bool, error)
	set    func(ctx context.Context, v string) error // through the cached object
	rawSet func(ctx context.Context, v string) error // through a plain go-redis client
	cliSet func(v string) []string                   // the command's arguments for redis-cli
}

// bucketRegister is b as a register.
func bucketRegister(b *Bucket[string], raw redis.UniversalClient) register {
	return register{
		get:    b.Get,
		set:    b.Set,
		rawSet: func(ctx context.Context, v string) error { return raw.Set(ctx, b.Name(), v, 0).Err() },
		cliSet: func(v string) []string { return []string{"set", b.Name(), v} },
	}
}

// runCSCWorkload runs, until stop closes, readers through a cached object
// and writers of three kinds of its register (the library's own, a plain
// go-redis client, redis-cli processes when cliArgs is set), and records
// everything in h. While paused is set, no write starts.
func runCSCWorkload(t *testing.T, ctx context.Context, h *cscHistory, b register, cliArgs func() []string, stop <-chan struct{}, paused *atomic.Bool) (foreignReads *atomic.Int64) {
	t.Helper()
	foreignReads = new(atomic.Int64)
	var wg sync.WaitGroup
	loop := func(pause time.Duration, f func(n int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-time.After(pause):
				}
				f(n)
			}
		}()
	}
	for r := 0; r < 3; r++ {
		loop(200*time.Microsecond, func(int) {
			inv := history.Now()
			v, ok, err := b.get(ctx)
			ret := history.Now()
			if err != nil || !ok {
				return // an error is not a read; absence cannot happen after the first write
			}
			if !strings.HasPrefix(v, "own") {
				foreignReads.Add(1)
			}
			h.read(history.Read{Value: v, Invoke: inv, Return: ret})
		})
	}
	write := func(value string, own bool, do func() error) {
		if paused != nil && paused.Load() {
			return
		}
		inv := history.Now()
		err := do()
		ret := history.Now()
		if err != nil {
			// Unknown outcome: it may have been applied, at any time from now on.
			ret = 1<<63 - 1
		}
		h.write(history.Write{Value: value, Own: own, Invoke: inv, Return: ret})
	}
	loop(7*time.Millisecond, func(n int) {
		v := "own-" + strconv.Itoa(n)
		write(v, true, func() error { return b.set(ctx, v) })
	})
	loop(5*time.Millisecond, func(n int) {
		v := "raw-" + strconv.Itoa(n)
		write(v, false, func() error { return b.rawSet(ctx, v) })
	})
	if cliArgs != nil {
		loop(20*time.Millisecond, func(n int) {
			v := "cli-" + strconv.Itoa(n)
			write(v, false, func() error {
				out, err := exec.CommandContext(ctx, cliArgs()[0], append(cliArgs()[1:], b.cliSet(v)...)...).CombinedOutput()
				if o := strings.TrimSpace(string(out)); err == nil && o != "OK" && o != "0" && o != "1" {
					err = fmt.Errorf("redis-cli: %s", out)
				}
				return err
			})
		})
	}
	t.Cleanup(wg.Wait)
	go func() { <-stop; wg.Wait() }()
	return foreignReads
}

// checkCSCHistory checks h and logs what it saw.
func checkCSCHistory(t *testing.T, h *cscHistory) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	rep := history.CheckReads(h.writes, h.reads, int64(staleWindow))
	for _, l := range rep.Bad() {
		t.Error(l)
	}
	t.Logf("%d writes, %d reads, %d read a replaced value within the window (at most %v late)", len(h.writes), rep.Reads, rep.Late, time.Duration(rep.MaxLate))
	if len(h.reads) < 100 || len(h.writes) < 50 {
		t.Fatalf("history too small to say anything: %d reads, %d writes", len(h.reads), len(h.writes))
	}
}

// killTracking kills the client-side cache's tracking connections on the
// server rdb talks to, and returns how many it killed.
func killTracking(ctx context.Context, rdb redis.UniversalClient) int {
	list, err := rdb.ClientList(ctx).Result()
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		var id int64
		if _, err := fmt.Sscanf(line, "id=%d", &id); err == nil && strings.Contains(line, " name=redisson-tracking-") {
			if rdb.ClientKillByFilter(ctx, "id", strconv.FormatInt(id, 10)).Err() == nil {
				n++
			}
		}
	}
	return n
}

// Reads through a cached bucket, against writes by the library itself, a
// plain go-redis client and redis-cli, while the tracking connection (and
// every pub/sub connection) is killed again and again: no read returns a
// value replaced by an own write that had returned, nor one replaced by a
// foreign write more than staleWindow before the read began.
func TestClientSideCachingHistory(t *testing.T) {
	srv := redistest.Start(t)
	_, cli := redistest.ServerPath(t)
	rdb := srv.Client(t)
	raw := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, &Options{ClientSideCaching: ClientSideCaching{Prefixes: []string{"csc:"}}})
	waitCacheLive(t, c)
	b := GetBucket[string](c, "csc:register", WithCodec(StringCodec{}), WithClientSideCaching())
	h := &cscHistory{}
	inv := history.Now()
	if err := b.Set(ctx, "own-init"); err != nil {
		t.Fatal(err)
	}
	h.write(history.Write{Value: "own-init", Own: true, Invoke: inv, Return: history.Now()})

	stop := make(chan struct{})
	foreign := runCSCWorkload(t, ctx, h, bucketRegister(b, raw), func() []string { return []string{cli, "-p", strconv.Itoa(srv.Port())} }, stop, nil)
	kills := 0
	for i := 0; i < 8; i++ {
		time.Sleep(300 * time.Millisecond)
		if i%2 == 0 {
			kills += killTracking(ctx, raw)
		} else {
			raw.Do(ctx, "client", "kill", "type", "pubsub")
			kills++
		}
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	time.Sleep(50 * time.Millisecond)
	checkCSCHistory(t, h)
	st := c.csc.Load().Stats()
	t.Logf("kills %d, tracking connections %d, cache %+v, reads of foreign values %d", kills, c.csc.Load().Connections(), st, foreign.Load())
	if kills < 4 || c.csc.Load().Connections() < 4 {
		t.Fatalf("kills %d, connections %d: the tracking connection was not lost and replaced", kills, c.csc.Load().Connections())
	}
	if st.Hits == 0 || foreign.Load() == 0 || st.Flushes < 4 {
		t.Fatalf("cache %+v, foreign reads %d: the workload did not exercise hits, foreign writes and flushes", st, foreign.Load())
	}
}

// The history check of TestClientSideCachingHistory for one entry of a
// cached map, whose foreign writers also write another field of the hash
// (which drops every cached entry of it).
func TestMapClientSideCachingHistory(t *testing.T) {
	srv := redistest.Start(t)
	_, cli := redistest.ServerPath(t)
	rdb := srv.Client(t)
	raw := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	m := GetMap[string, string](c, "csc:map", WithCodec(StringCodec{}), WithClientSideCaching())
	reg := register{
		get: func(ctx context.Context) (string, bool, error) { return m.Get(ctx, "f") },
		set: func(ctx context.Context, v string) error { _, err := m.FastPut(ctx, "f", v); return err },
		rawSet: func(ctx context.Context, v string) error {
			return raw.HSet(ctx, m.Name(), "f", v, "other", v).Err()
		},
		cliSet: func(v string) []string { return []string{"hset", m.Name(), "f", v} },
	}
	h := &cscHistory{}
	inv := history.Now()
	if err := reg.set(ctx, "own-init"); err != nil {
		t.Fatal(err)
	}
	h.write(history.Write{Value: "own-init", Own: true, Invoke: inv, Return: history.Now()})
	stop := make(chan struct{})
	runCSCWorkload(t, ctx, h, reg, func() []string { return []string{cli, "-p", strconv.Itoa(srv.Port())} }, stop, nil)
	for i := 0; i < 4; i++ {
		time.Sleep(300 * time.Millisecond)
		killTracking(ctx, raw)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	time.Sleep(50 * time.Millisecond)
	checkCSCHistory(t, h)
	if st := c.csc.Load().Stats(); st.Hits == 0 || st.Flushes < 4 {
		t.Fatalf("cache %+v: no hits or no flushes", st)
	}
}

// A foreign write (a plain go-redis client's SET) is seen by a cached
// bucket once its invalidation message arrives: the time from the write's
// return until the cached read returns the new value is logged (p50, p99),
// never asserted.
func TestClientSideCachingInvalidationLatency(t *testing.T) {
	rdb := sharedRedis(t)
	raw := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	b := GetBucket[string](c, name, WithCodec(StringCodec{}), WithClientSideCaching())
	var lat []time.Duration
	for i := 0; i < 200; i++ {
		v := strconv.Itoa(i)
		raw.Set(ctx, name, v, 0)
		eventually(t, 10*time.Second, "cached", func() bool {
			before := cacheHits(c)
			got, _, _ := b.Get(ctx)
			return got == v && cacheHits(c) > before
		})
		next := v + "+"
		raw.Set(ctx, name, next, 0)
		t0 := time.Now()
		for {
			got, _, err := b.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got == next {
				break
			}
			if time.Since(t0) > 10*time.Second {
				t.Fatalf("foreign write not seen after 10s")
			}
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	t.Logf("foreign write seen after: p50 %v, p99 %v, max %v", lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])
}

// Across a Sentinel failover, the cache moves its tracking connection to
// the new master: the history of reads against writes through the
// failover clients (own and plain) stays within the window, and a write on
// the new master is seen. Writes pause from just before the failover until
// both clients talk to the new master, so that no acknowledged write is
// lost with the old master (asynchronous replication's loss, which no
// cache can hide, would read as a stale read); reads go on throughout.
func TestClientSideCachingSentinelFailover(t *testing.T) {
	s := redistest.StartSentinel(t, nil)
	rdb := s.Client(t)
	raw := s.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, rdb, &Options{PubSubHealthCheck: 200 * time.Millisecond})
	waitCacheLive(t, c)
	b := GetBucket[string](c, "csc:failover", WithCodec(StringCodec{}), WithClientSideCaching())
	h := &cscHistory{}
	inv := history.Now()
	if err := b.Set(ctx, "own-init"); err != nil {
		t.Fatal(err)
	}
	h.write(history.Write{Value: "own-init", Own: true, Invoke: inv, Return: history.Now()})
	stop := make(chan struct{})
	var paused atomic.Bool
	runCSCWorkload(t, ctx, h, bucketRegister(b, raw), nil, stop, &paused)
	time.Sleep(300 * time.Millisecond)
	before := c.csc.Load().Connections()
	paused.Store(true)
	time.Sleep(50 * time.Millisecond)
	if err := raw.Do(ctx, "wait", 1, 5000).Err(); err != nil {
		t.Fatal(err)
	}
	r := s.Failover(t)
	t.Logf("failover %s -> %s", r.OldMaster, r.NewMaster)
	_, port, _ := strings.Cut(r.NewMaster, ":")
	for _, cl := range []*redis.Client{rdb, raw} {
		eventually(t, 30*time.Second, "client on the new master", func() bool {
			got, err := cl.ConfigGet(ctx, "port").Result()
			return err == nil && got["port"] == port
		})
	}
	paused.Store(false)
	eventually(t, 30*time.Second, "tracking connection on the new master", func() bool {
		return c.csc.Load().Connections() > before && c.csc.Load().Stats().Live
	})
	time.Sleep(time.Second)
	close(stop)
	time.Sleep(50 * time.Millisecond)
	checkCSCHistory(t, h)
	direct := redis.NewClient(&redis.Options{Addr: r.NewMaster})
	defer direct.Close()
	if err := direct.Set(ctx, b.Name(), "after-failover", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "write on the new master seen", func() bool {
		v, _, _ := b.Get(ctx)
		return v == "after-failover"
	})
}
