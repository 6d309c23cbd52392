package redisson

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
)

// counterValue maps a register value ("own-3", "raw-4", "cli-5") to the
// number an AtomicLong stores for it, and back: own, raw and cli values
// live in ranges of their own.
func counterValue(v string) int64 {
	kind, n, _ := strings.Cut(v, "-")
	if v == "own-init" {
		return 1_000_000
	}
	i, _ := strconv.ParseInt(n, 10, 64)
	switch kind {
	case "raw":
		return 2_000_000 + i
	case "cli":
		return 3_000_000 + i
	}
	return 1_000_001 + i // own; own-init is 1,000,000
}

func counterString(n int64) string {
	switch {
	case n >= 3_000_000:
		return "cli-" + strconv.FormatInt(n-3_000_000, 10)
	case n >= 2_000_000:
		return "raw-" + strconv.FormatInt(n-2_000_000, 10)
	case n == 1_000_000:
		return "own-init"
	}
	return "own-" + strconv.FormatInt(n-1_000_001, 10)
}

// The history check of TestClientSideCachingHistory for the multi-key and
// counter reads: Map.GetAll (one field cached, one missing), Buckets.Get
// (the register and a name never written) and AtomicLong.Get, against own,
// go-redis and redis-cli writers, with the tracking connection killed.
func TestMultiClientSideCachingHistory(t *testing.T) {
	srv := redistest.Start(t)
	_, cli := redistest.ServerPath(t)
	rdb := srv.Client(t)
	raw := srv.Client(t)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	m := GetMap[string, string](c, "csc:getall", WithCodec(StringCodec{}), WithClientSideCaching())
	bs := GetBuckets[string](c, WithCodec(StringCodec{}), WithClientSideCaching())
	al := c.GetAtomicLong("csc:counter", WithClientSideCaching())
	regs := map[string]register{
		"Map.GetAll": {
			get: func(ctx context.Context) (string, bool, error) {
				all, err := m.GetAll(ctx, "nope", "f")
				v, ok := all["f"]
				return v, ok, err
			},
			set:    func(ctx context.Context, v string) error { _, err := m.FastPut(ctx, "f", v); return err },
			rawSet: func(ctx context.Context, v string) error { return raw.HSet(ctx, m.Name(), "f", v).Err() },
			cliSet: func(v string) []string { return []string{"hset", m.Name(), "f", v} },
		},
		"Buckets.Get": {
			get: func(ctx context.Context) (string, bool, error) {
				all, err := bs.Get(ctx, "csc:never", "csc:mget")
				v, ok := all["csc:mget"]
				return v, ok, err
			},
			set:    func(ctx context.Context, v string) error { return bs.Set(ctx, map[string]string{"csc:mget": v}) },
			rawSet: func(ctx context.Context, v string) error { return raw.Set(ctx, "csc:mget", v, 0).Err() },
			cliSet: func(v string) []string { return []string{"set", "csc:mget", v} },
		},
		"AtomicLong.Get": {
			get: func(ctx context.Context) (string, bool, error) {
				n, err := al.Get(ctx)
				return counterString(n), n != 0, err
			},
			set: func(ctx context.Context, v string) error { return al.Set(ctx, counterValue(v)) },
			rawSet: func(ctx context.Context, v string) error {
				return raw.Set(ctx, al.Name(), counterValue(v), 0).Err()
			},
			cliSet: func(v string) []string { return []string{"set", al.Name(), strconv.FormatInt(counterValue(v), 10)} },
		},
	}
	for what, reg := range regs {
		t.Run(what, func(t *testing.T) {
			ctx := testCtx(t, time.Minute)
			h := &cscHistory{}
			inv := history.Now()
			if err := reg.set(ctx, "own-init"); err != nil {
				t.Fatal(err)
			}
			h.write(history.Write{Value: "own-init", Own: true, Invoke: inv, Return: history.Now()})
			before := c.csc.Load().Stats()
			stop := make(chan struct{})
			foreign := runCSCWorkload(t, ctx, h, reg, func() []string { return []string{cli, "-p", strconv.Itoa(srv.Port())} }, stop, nil)
			for i := 0; i < 4; i++ {
				time.Sleep(300 * time.Millisecond)
				killTracking(ctx, raw)
			}
			time.Sleep(300 * time.Millisecond)
			close(stop)
			time.Sleep(50 * time.Millisecond)
			checkCSCHistory(t, h)
			st := c.csc.Load().Stats()
			if st.Hits == before.Hits || st.Flushes < before.Flushes+4 || foreign.Load() == 0 {
				t.Fatalf("cache %+v (before %+v), foreign reads %d: no hits, flushes or foreign reads", st, before, foreign.Load())
			}
		})
	}
}
