package redisson

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sot is a source of truth for the Writer tests: a Go map that records
// every call, and can be made to fail or to block.
type sot struct {
	mu      sync.Mutex
	data    map[string]string
	calls   int
	failN   int           // fail this many calls first
	block   chan struct{} // non-nil: calls wait for it to close
	maxKeys int
}

func newSOT() *sot { return &sot{data: map[string]string{}} }

func (s *sot) gate(ctx context.Context) error {
	if s.block == nil {
		return nil
	}
	select {
	case <-s.block:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sot) writer() Writer[string, string] {
	return Writer[string, string]{
		Write: func(ctx context.Context, m map[string]string) error {
			if err := s.gate(ctx); err != nil {
				return err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			s.calls++
			if s.failN > 0 {
				s.failN--
				return errSOTDown
			}
			s.maxKeys = max(s.maxKeys, len(m))
			maps.Copy(s.data, m)
			return nil
		},
		Delete: func(ctx context.Context, keys []string) error {
			if err := s.gate(ctx); err != nil {
				return err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			s.calls++
			if s.failN > 0 {
				s.failN--
				return errSOTDown
			}
			for _, k := range keys {
				delete(s.data, k)
			}
			return nil
		},
	}
}

func (s *sot) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.data)
}

var errSOTDown = errors.New("source of truth down")

// writerMap is one map kind's calls, for the tests that run on both.
type writerMap struct {
	put    func(ctx context.Context, k, v string) error
	remove func(ctx context.Context, k string) error
	get    func(ctx context.Context, k string) (string, bool, error)
	flush  func(ctx context.Context) error
	stats  func() CacheStats
}

// writerMaps returns a LocalCachedMap and a MapCache, each on its own
// client and name, with opts.
func writerMaps(t *testing.T, rdb redis.UniversalClient, opts ...ObjectOption) map[string]writerMap {
	c := newClient(t, rdb, nil)
	lcName, mcName := uniqueName(t, rdb), uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), lcName, mcName) })
	lc := GetLocalCachedMap[string, string](c, lcName, LocalCacheOptions{}, opts...)
	t.Cleanup(func() { lc.Close() })
	mc := GetMapCache[string, string](c, mcName, opts...)
	return map[string]writerMap{
		"local cached map": {
			put:    func(ctx context.Context, k, v string) error { _, err := lc.FastPut(ctx, k, v); return err },
			remove: func(ctx context.Context, k string) error { _, _, err := lc.Remove(ctx, k); return err },
			get:    lc.Get, flush: lc.Flush, stats: lc.CacheStats,
		},
		"map cache": {
			put:    func(ctx context.Context, k, v string) error { _, _, err := mc.Put(ctx, k, v); return err },
			remove: func(ctx context.Context, k string) error { _, _, err := mc.Remove(ctx, k); return err },
			get:    mc.Get, flush: mc.Flush, stats: mc.CacheStats,
		},
	}
}

// TestWriteThrough: each write reaches the Writer before it returns, and
// CacheStats counts the keys written.
func TestWriteThrough(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	for _, kind := range []string{"local cached map", "map cache"} {
		s := newSOT()
		m := writerMaps(t, rdb, WithWriteThrough(s.writer()))[kind]
		for _, k := range []string{"a", "b", "c"} {
			if err := m.put(ctx, k, "v"+k); err != nil {
				t.Fatalf("%s: put: %v", kind, err)
			}
			if got := s.snapshot()[k]; got != "v"+k {
				t.Fatalf("%s: source has %q after put returned, want %q", kind, got, "v"+k)
			}
		}
		if err := m.remove(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if err := m.remove(ctx, "never-there"); err != nil {
			t.Fatal(err)
		}
		if got, want := s.snapshot(), map[string]string{"a": "va", "c": "vc"}; !maps.Equal(got, want) {
			t.Fatalf("%s: source %v, want %v", kind, got, want)
		}
		if st := m.stats(); st.Writes != 5 || st.WriteErrors != 0 || st.WriteQueue != 0 {
			t.Fatalf("%s: stats %+v, want 5 writes, no errors, no queue", kind, st)
		}
	}
}

// TestWriteThroughFailureEvicts: a Writer error is returned (ErrWriterFailed
// and the Writer's own) and leaves the key absent from the map, so that a
// read-through read loads the source's value.
func TestWriteThroughFailureEvicts(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	for _, kind := range []string{"local cached map", "map cache"} {
		s := newSOT()
		s.data["k"] = "source"
		rt := WithReadThrough(ReadThrough[string, string]{Load: func(_ context.Context, k string) (string, error) {
			if v, ok := s.snapshot()[k]; ok {
				return v, nil
			}
			return "", ErrKeyNotFound
		}})
		m := writerMaps(t, rdb, WithWriteThrough(s.writer()), rt)[kind]
		s.failN = 1
		err := m.put(ctx, "k", "refused")
		if !errors.Is(err, ErrWriterFailed) || !errors.Is(err, errSOTDown) {
			t.Fatalf("%s: put with a failing writer: got %v, want ErrWriterFailed wrapping the writer's error", kind, err)
		}
		v, ok, err := m.get(ctx, "k")
		if err != nil || !ok || v != "source" {
			t.Fatalf("%s: Get after the failed write = %q, %v, %v; want the source's value", kind, v, ok, err)
		}
		if st := m.stats(); st.WriteErrors != 1 {
			t.Fatalf("%s: WriteErrors = %d, want 1", kind, st.WriteErrors)
		}
	}
}

// TestWriteBehindFlush: Flush writes the latest value of each key, in
// batches of at most BatchSize.
func TestWriteBehindFlush(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	for _, kind := range []string{"local cached map", "map cache"} {
		s := newSOT()
		m := writerMaps(t, rdb, WithWriteBehind(s.writer(), WriteBehind{BatchSize: 7, Delay: time.Hour}))[kind]
		want := map[string]string{}
		for round := range 3 {
			for i := range 20 {
				k, v := string(rune('a'+i)), string(rune('0'+round))
				if err := m.put(ctx, k, v); err != nil {
					t.Fatal(err)
				}
				want[k] = v
			}
		}
		if err := m.remove(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		delete(want, "a")
		if err := m.flush(ctx); err != nil {
			t.Fatalf("%s: Flush: %v", kind, err)
		}
		if got := s.snapshot(); !maps.Equal(got, want) {
			t.Fatalf("%s: source %v, want %v", kind, got, want)
		}
		if s.maxKeys > 7 {
			t.Fatalf("%s: a Write of %d keys, want at most BatchSize 7", kind, s.maxKeys)
		}
		// Full batches go at once, so how much was coalesced depends on
		// the timing: between 21 keys (20 puts, 1 delete) and 61.
		if st := m.stats(); st.Writes < 21 || st.Writes > 61 || st.WriteQueue != 0 {
			t.Fatalf("%s: stats %+v, want 21 to 61 keys written, none queued", kind, st)
		}
	}
}

// TestWriteBehindRetries: a Writer that fails three times gets the batch on
// the fourth call; each failure is an EventWriteBehindFailed and a
// WriteError, and nothing is dropped.
func TestWriteBehindRetries(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	rec := &recorder{}
	c := newClient(t, rdb, &Options{Observer: rec})
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	s := newSOT()
	s.failN = 3
	lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{},
		WithWriteBehind(s.writer(), WriteBehind{Delay: time.Millisecond}))
	defer lc.Close()
	if _, err := lc.FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := lc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.snapshot()["k"]; got != "v" {
		t.Fatalf("source has %q, want v", got)
	}
	st := lc.CacheStats()
	if st.WriteErrors != 3 || st.Writes != 1 || st.WritesDropped != 0 {
		t.Fatalf("stats %+v, want 3 write errors, 1 write, none dropped", st)
	}
	if n := len(rec.eventsOf(EventWriteBehindFailed)); n != 3 {
		t.Fatalf("%d EventWriteBehindFailed, want 3", n)
	}
	if ops := rec.opsOf(opCacheWrite, name); len(ops) != 4 || ops[0].Outcome != OutcomeError || ops[3].Outcome != OutcomeOK {
		t.Fatalf("cache.write operations %+v, want 3 failed then 1 ok", ops)
	}
}

// TestWriteBehindBound: with the Writer stuck, the queue takes QueueSize
// keys; then a write blocks until its context ends, or with FailWhenFull
// returns ErrWriteBehindFull at once. Either way the map was written.
func TestWriteBehindBound(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	for _, fail := range []bool{false, true} {
		s := newSOT()
		s.block = make(chan struct{})
		c := newClient(t, rdb, nil)
		name := uniqueName(t, rdb)
		t.Cleanup(func() { rdb.Del(context.Background(), name) })
		lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{},
			WithWriteBehind(s.writer(), WriteBehind{BatchSize: 2, QueueSize: 4, FailWhenFull: fail}))
		for _, k := range []string{"a", "b", "c", "d"} {
			if _, err := lc.FastPut(ctx, k, k); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := lc.FastPut(ctx, "d", "d2"); err != nil {
			t.Fatalf("rewriting a queued key on a full queue: %v", err)
		}
		if q := lc.CacheStats().WriteQueue; q != 4 {
			t.Fatalf("WriteQueue = %d, want 4", q)
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err := lc.FastPut(short, "e", "e")
		cancel()
		want := error(context.DeadlineExceeded)
		if fail {
			want = ErrWriteBehindFull
		}
		if !errors.Is(err, want) {
			t.Fatalf("FailWhenFull %v: write on a full queue: got %v, want %v", fail, err, want)
		}
		if v, _ := rdb.HGet(ctx, name, `"e"`).Result(); v == "" {
			if n, _ := rdb.HLen(ctx, name).Result(); n != 5 {
				t.Fatalf("the map has %d entries, want 5: the refused write is in Redis", n)
			}
		}
		close(s.block)
		if err := lc.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if got := s.snapshot(); len(got) != 4 || got["d"] != "d2" {
			t.Fatalf("source %v, want a-d with d=d2", got)
		}
	}
}

// TestWriteBehindCloseGivesUp: Close with the Writer stuck returns after
// CloseTimeout with ErrWriteBehindUnflushed naming the keys lost, and
// reports them dropped.
func TestWriteBehindCloseGivesUp(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	rec := &recorder{}
	c := newClient(t, rdb, &Options{Observer: rec})
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	s := newSOT()
	s.block = make(chan struct{})
	defer close(s.block)
	lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{},
		WithWriteBehind(s.writer(), WriteBehind{BatchSize: 2, CloseTimeout: 100 * time.Millisecond}))
	for _, k := range []string{"a", "b", "c"} {
		if _, err := lc.FastPut(ctx, k, k); err != nil {
			t.Fatal(err)
		}
	}
	err := lc.Close()
	if !errors.Is(err, ErrWriteBehindUnflushed) {
		t.Fatalf("Close: got %v, want ErrWriteBehindUnflushed", err)
	}
	dropped := 0
	for _, e := range rec.eventsOf(EventWriteBehindDropped) {
		dropped += e.Count
	}
	if dropped != 3 || lc.CacheStats().WritesDropped != 3 {
		t.Fatalf("dropped: %d in events, %d in stats; want 3", dropped, lc.CacheStats().WritesDropped)
	}
	if _, err := lc.FastPut(ctx, "x", "x"); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("write after Close: %v, want ErrHandleClosed", err)
	}
}

// TestMapCacheWriteBehindClientClose: the MapCache handles of a name share
// one queue, which coalesces the writes of a key, and Client.Close writes
// it out.
func TestMapCacheWriteBehindClientClose(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c, err := New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(name)...) })
	s := newSOT()
	var mc *MapCache[string, string]
	for i := range 100 {
		mc = GetMapCache[string, string](c, name, WithWriteBehind(s.writer(), WriteBehind{Delay: time.Hour, BatchSize: 1000}))
		if _, err := mc.FastPut(ctx, string(rune('A'+i%50)), "v"+string(rune('0'+i/50))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.snapshot()); n != 0 {
		t.Fatalf("source has %d keys before Close, want 0 (Delay 1h)", n)
	}
	if q := c.Stats().Cache.WriteQueue; q != 50 {
		t.Fatalf("Stats.Cache.WriteQueue = %d, want 50 (one queue for every handle)", q)
	}
	c.Close()
	got := s.snapshot()
	if len(got) != 50 || got["A"] != "v1" {
		t.Fatalf("source has %d keys, A=%q after Client.Close, want 50, v1", len(got), got["A"])
	}
	if w := mc.CacheStats().Writes; w != 50 {
		t.Fatalf("Writes = %d, want 50 (two writes of each key coalesced)", w)
	}
}

// TestWriterOptionErrors: a wrong Writer is ErrInvalidOption from every
// call, with Redis unchanged.
func TestWriterOptionErrors(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	s := newSOT()
	for i, opt := range []ObjectOption{
		WithWriteThrough(Writer[string, int]{}),
		WithWriteThrough(Writer[string, string]{Write: s.writer().Write}),
		WithWriteBehind(s.writer(), WriteBehind{BatchSize: -1}),
		WithWriteBehind(s.writer(), WriteBehind{Delay: -time.Second}),
		WithWriteBehind(s.writer(), WriteBehind{QueueSize: -1}),
		WithWriteBehind(s.writer(), WriteBehind{MaxAttempts: -1}),
		WithWriteBehind(s.writer(), WriteBehind{CloseTimeout: -1}),
	} {
		lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{}, opt)
		if _, err := lc.FastPut(ctx, "k", "v"); !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("option %d: LocalCachedMap.FastPut: %v, want ErrInvalidOption", i, err)
		}
		mc := GetMapCache[string, string](c, name+":mc"+string(rune('0'+i)), opt)
		if _, err := mc.FastPut(ctx, "k", "v"); !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("option %d: MapCache.FastPut: %v, want ErrInvalidOption", i, err)
		}
		if err := mc.Flush(ctx); !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("option %d: MapCache.Flush: %v, want ErrInvalidOption", i, err)
		}
		if n, _ := rdb.Exists(ctx, name, name+":mc"+string(rune('0'+i))).Result(); n != 0 {
			t.Fatalf("option %d: Redis written", i)
		}
	}
}

// TestWriteBehindWriterUsesClient: a Writer that writes through the same
// Client still works while Client.Close writes its queue out.
func TestWriteBehindWriterUsesClient(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c, err := New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name, name+":sot") })
	sot := GetMap[string, string](c, name+":sot")
	lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{}, WithWriteBehind(Writer[string, string]{
		Write: func(ctx context.Context, m map[string]string) error {
			for k, v := range m {
				if _, err := sot.FastPut(ctx, k, v); err != nil {
					return err
				}
			}
			return nil
		},
		Delete: func(ctx context.Context, keys []string) error { _, err := sot.FastRemove(ctx, keys...); return err },
	}, WriteBehind{Delay: time.Hour, CloseTimeout: 10 * time.Second}))
	if _, err := lc.FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if v, err := rdb.HLen(ctx, name+":sot").Result(); err != nil || v != 1 {
		t.Fatalf("the Writer's map has %d entries (%v) after Client.Close, want 1", v, err)
	}
}
