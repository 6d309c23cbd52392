package redisson

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestBucketsOperations sets, reads and try-sets buckets spread over the
// slots, and checks each one reads back through a Bucket.
func TestBucketsOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		names := spreadNames(t, rdb, 8)
		bs := GetBuckets[string](c)
		values := map[string]string{}
		for i, n := range names[:6] {
			values[n] = strings.Repeat("v", i+1)
		}
		if err := bs.Set(ctx, values); err != nil {
			t.Fatal(err)
		}
		got, err := bs.Get(ctx, names...)
		if err != nil || len(got) != 6 {
			t.Fatalf("Get = %v, %v; want the 6 set", got, err)
		}
		for n, v := range values {
			if got[n] != v {
				t.Errorf("Get[%s] = %q; want %q", n, got[n], v)
			}
			mustBucket(t, ctx, GetBucket[string](c, n), v)
		}
		if got, err := bs.Get(ctx); err != nil || len(got) != 0 {
			t.Fatalf("Get() = %v, %v; want an empty map", got, err)
		}
		// TrySet over one slot: all or nothing.
		tag := "{" + uniqueName(t, rdb) + "}"
		a, b, x := tag+":a", tag+":b", tag+":x"
		t.Cleanup(func() { rdb.Del(context.Background(), a, b, x) })
		if ok, err := bs.TrySet(ctx, map[string]string{a: "1", b: "2"}); err != nil || !ok {
			t.Fatalf("TrySet on absent = %v, %v; want true", ok, err)
		}
		if ok, err := bs.TrySet(ctx, map[string]string{x: "3", a: "4"}); err != nil || ok {
			t.Fatalf("TrySet with one present = %v, %v; want false", ok, err)
		}
		if got, err := bs.Get(ctx, a, b, x); err != nil || len(got) != 2 || got[a] != "1" || got[b] != "2" {
			t.Fatalf("after a refused TrySet, Get = %v, %v; want a=1 b=2 and no x", got, err)
		}
	})
}

// TestBucketsRedissonWire replays what Redisson's RBuckets sent (the
// RBuckets recording: MSET, MSETNX with MsgPackJacksonCodec and StringCodec)
// and checks both ways: Go reads Redisson's keys, and Go's writes are the
// bytes Redisson wrote.
func TestBucketsRedissonWire(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, &Options{Codec: MsgpackCodec{}})
	ctx := testCtx(t, time.Minute)
	p := uniqueName(t, rdb) + ":"
	key := func(k string) string { return p + k }
	t.Cleanup(func() {
		rdb.Del(context.Background(), key("b1"), key("b2"), key("b3"), key("b4"), key("b5"), key("b6"), key("s1"), key("s2"), key("s3"))
	})
	// Step 1 as Redisson sent it.
	rdb.MSet(ctx, key("b2"), "\x92\xaejava.lang.Long\x02", key("b3"), "\xcb?\xf8\x00\x00\x00\x00\x00\x00", key("b1"), "\xa2v1")
	anyv, err := GetBuckets[any](c).Get(ctx, key("b1"), key("b2"), key("b3"), key("missing"))
	if err != nil || len(anyv) != 3 {
		t.Fatalf("Get of Redisson's keys = %v, %v; want 3 values", anyv, err)
	}
	if anyv[key("b1")] != "v1" || anyv[key("b3")] != 1.5 {
		t.Fatalf("Get = %v; want b1=v1 b3=1.5", anyv)
	}
	// Step 3: trySet {b4: x, b5: y} is MSETNX b4 "\xa1x" b5 "\xa1y".
	bs := GetBuckets[string](c)
	if ok, err := bs.TrySet(ctx, map[string]string{key("b4"): "x", key("b5"): "y"}); err != nil || !ok {
		t.Fatalf("TrySet = %v, %v", ok, err)
	}
	if v := rdb.Get(ctx, key("b4")).Val(); v != "\xa1x" {
		t.Fatalf("b4 holds %q; Redisson wrote \\xa1x", v)
	}
	// Step 4: one exists, nothing written.
	if ok, err := bs.TrySet(ctx, map[string]string{key("b6"): "z", key("b1"): "w"}); err != nil || ok {
		t.Fatalf("TrySet with b1 present = %v, %v; want false", ok, err)
	}
	if n := rdb.Exists(ctx, key("b6")).Val(); n != 0 || rdb.Get(ctx, key("b1")).Val() != "\xa2v1" {
		t.Fatalf("a refused TrySet wrote something")
	}
	// Steps 6-8: StringCodec.
	ss := GetBuckets[string](c, WithCodec(StringCodec{}))
	if err := ss.Set(ctx, map[string]string{key("s1"): "a", key("s2"): "b"}); err != nil {
		t.Fatal(err)
	}
	if v := rdb.Get(ctx, key("s1")).Val(); v != "a" {
		t.Fatalf("s1 holds %q; Redisson's StringCodec wrote a", v)
	}
	got, err := ss.Get(ctx, key("s1"), key("s2"), key("b1"))
	if err != nil || got[key("s1")] != "a" || got[key("s2")] != "b" || got[key("b1")] != "\xa2v1" {
		t.Fatalf("StringCodec Get = %q, %v; want a, b and b1's raw bytes", got, err)
	}
}

// TestBucketsBadInput: an empty name, a closed client, a nil value, a value
// the codec refuses and (on Cluster) a TrySet over several slots give their
// errors and send nothing.
func TestBucketsBadInput(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		closed := newClient(t, rdb, nil)
		closed.Close()
		names := spreadNames(t, rdb, 4)
		var nilp *string
		type point struct{ X int }
		cases := []struct {
			what string
			call func() error
			want error
		}{
			{"Get with an empty name", func() error { return second(GetBuckets[string](c).Get(ctx, names[0], "")) }, ErrEmptyName},
			{"Set with an empty name", func() error { return GetBuckets[string](c).Set(ctx, map[string]string{"": "v", names[0]: "v"}) }, ErrEmptyName},
			{"TrySet with an empty name", func() error { return second(GetBuckets[string](c).TrySet(ctx, map[string]string{"": "v"})) }, ErrEmptyName},
			{"Get on a closed client", func() error { return second(GetBuckets[string](closed).Get(ctx, names[0])) }, ErrClientClosed},
			{"Set on a closed client", func() error { return GetBuckets[string](closed).Set(ctx, map[string]string{names[0]: "v"}) }, ErrClientClosed},
			{"TrySet on a closed client", func() error { return second(GetBuckets[string](closed).TrySet(ctx, map[string]string{names[0]: "v"})) }, ErrClientClosed},
			{"Set of a nil pointer", func() error {
				return GetBuckets[*string](c).Set(ctx, map[string]*string{names[0]: nilp, names[1]: new(string)})
			}, ErrNilValue},
			{"TrySet of a nil pointer", func() error { return second(GetBuckets[*string](c).TrySet(ctx, map[string]*string{names[0]: nilp})) }, ErrNilValue},
			{"Set of a struct with StringCodec", func() error {
				return GetBuckets[point](c, WithCodec(StringCodec{})).Set(ctx, map[string]point{names[0]: {1}})
			}, ErrCodec},
		}
		if _, ok := rdb.(*redis.ClusterClient); ok {
			cases = append(cases, struct {
				what string
				call func() error
				want error
			}{"TrySet over several slots", func() error {
				return second(GetBuckets[string](c).TrySet(ctx, map[string]string{names[0]: "a", names[1]: "b", names[2]: "c", names[3]: "d"}))
			}, ErrCrossSlot})
		}
		for _, tc := range cases {
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Errorf("%s = %v; want %v", tc.what, err, tc.want)
			}
			if n := rdb.Exists(ctx, names...).Val(); n != 0 {
				t.Fatalf("%s wrote %d keys", tc.what, n)
			}
		}
		rdb.Set(ctx, names[0], "\xc1", 0) // never used by msgpack
		if _, err := GetBuckets[string](c).Get(ctx, names[0]); !errors.Is(err, ErrCodec) {
			t.Errorf("Get of bytes msgpack refuses = %v; want ErrCodec", err)
		}
	})
}

// slotCountHook counts, on one node, the round trips and the commands of
// each name.
type slotCountHook struct {
	mu    sync.Mutex
	trips int
	cmds  map[string]int
}

func (h *slotCountHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *slotCountHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if bucketsHousekeeping(cmd.Name()) {
			return next(ctx, cmd)
		}
		h.mu.Lock()
		h.trips++
		h.cmds[cmd.Name()]++
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (h *slotCountHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		h.trips++
		for _, c := range cmds {
			h.cmds[c.Name()]++
		}
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// bucketsHousekeeping reports whether a command is go-redis's own (the
// cluster client reloading its slot map, a connection's set-up).
func bucketsHousekeeping(name string) bool {
	switch name {
	case "cluster", "hello", "client", "auth", "select", "readonly", "ping", "command":
		return true
	}
	return false
}

// TestBucketsClusterOneTripPerNode counts, on each master of a 3-master
// cluster, what Get, Set and TrySet send: one MGET or MSET per slot group,
// at most one round trip per node; on a single node one command.
func TestBucketsClusterOneTripPerNode(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	cc := redistest.SharedCluster(t).Client(t)
	var hooks []*slotCountHook
	var mu sync.Mutex
	err := cc.ForEachShard(ctx, func(ctx context.Context, shard *redis.Client) error {
		h := &slotCountHook{cmds: map[string]int{}}
		shard.AddHook(h)
		mu.Lock()
		hooks = append(hooks, h)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, cc, nil)
	names := spreadNames(t, cc, 12)
	slots := map[int]bool{}
	values := map[string]int{}
	for i, n := range names {
		slots[hashSlot(n)] = true
		values[n] = i
	}
	reset := func() {
		for _, h := range hooks {
			h.mu.Lock()
			h.trips, h.cmds = 0, map[string]int{}
			h.mu.Unlock()
		}
	}
	check := func(op, cmd string, want int) {
		t.Helper()
		total := 0
		for i, h := range hooks {
			h.mu.Lock()
			if h.trips > 1 {
				t.Errorf("%s: node %d saw %d round trips; want at most 1", op, i, h.trips)
			}
			total += h.cmds[cmd]
			h.mu.Unlock()
		}
		if total != want {
			t.Errorf("%s sent %d %s commands; want %d (one per slot group)", op, total, cmd, want)
		}
	}
	bs := GetBuckets[int](c)
	reset()
	if err := bs.Set(ctx, values); err != nil {
		t.Fatal(err)
	}
	check("Set", "mset", len(slots))
	reset()
	got, err := bs.Get(ctx, names...)
	if err != nil || len(got) != len(names) {
		t.Fatalf("Get = %v, %v", got, err)
	}
	check("Get", "mget", len(slots))
	tag := "{" + uniqueName(t, cc) + "}"
	t.Cleanup(func() { cc.Del(context.Background(), tag+":a", tag+":b") })
	reset()
	if ok, err := bs.TrySet(ctx, map[string]int{tag + ":a": 1, tag + ":b": 2}); err != nil || !ok {
		t.Fatalf("TrySet = %v, %v", ok, err)
	}
	check("TrySet", "msetnx", 1)

	// Single node: one command each.
	rdb := sharedRedis(t)
	h := newBenchHook(rdb)
	sc := newClient(t, rdb, nil)
	sb := GetBuckets[int](sc)
	snames := spreadNames(t, rdb, 5)
	svals := map[string]int{}
	for i, n := range snames {
		svals[n] = i
	}
	for op, call := range map[string]func() error{
		"Set":    func() error { return sb.Set(ctx, svals) },
		"Get":    func() error { return second(sb.Get(ctx, snames...)) },
		"TrySet": func() error { return second(sb.TrySet(ctx, svals)) },
	} {
		rt0 := h.roundTrips()
		if err := call(); err != nil {
			t.Fatal(err)
		}
		if n := h.roundTrips() - rt0; n != 1 {
			t.Errorf("single node: %s made %d round trips; want 1", op, n)
		}
	}
}
