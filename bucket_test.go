package redisson

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// topologies runs f on the shared single node and on the shared 3-master
// cluster.
func topologies(t *testing.T, f func(t *testing.T, rdb redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) { f(t, sharedRedis(t)) })
	t.Run("cluster", func(t *testing.T) { f(t, redistest.SharedCluster(t).Client(t)) })
}

// spreadNames returns n unique names spread over the slots (and, on a
// cluster, the masters).
func spreadNames(t *testing.T, rdb redis.UniversalClient, n int) []string {
	t.Helper()
	base := uniqueName(t, rdb)
	names := make([]string, n)
	for i := range names {
		names[i] = base + ":" + strconv.Itoa(i)
		t.Cleanup(func() { rdb.Del(context.Background(), names[i]) })
	}
	return names
}

// TestBucketOperations walks every Bucket call on names spread over the
// cluster, with each codec that handles strings.
func TestBucketOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		codecs := []Codec{MsgpackCodec{}, JSONCodec{}, StringCodec{}, BytesCodec{}}
		for i, name := range spreadNames(t, rdb, 12) {
			codec := codecs[i%len(codecs)]
			b := GetBucket[string](c, name, WithCodec(codec))
			if v, ok, err := b.Get(ctx); err != nil || ok || v != "" {
				t.Fatalf("%s Get on missing = %q, %v, %v; want \"\", false, nil", codec.Name(), v, ok, err)
			}
			if ok, err := b.SetIfExists(ctx, "x"); err != nil || ok {
				t.Fatalf("SetIfExists on missing = %v, %v; want false, nil", ok, err)
			}
			if ok, err := b.SetIfAbsent(ctx, "one"); err != nil || !ok {
				t.Fatalf("SetIfAbsent on missing = %v, %v; want true, nil", ok, err)
			}
			if ok, err := b.SetIfAbsent(ctx, "other"); err != nil || ok {
				t.Fatalf("SetIfAbsent on present = %v, %v; want false, nil", ok, err)
			}
			mustBucket(t, ctx, b, "one")
			if ok, err := b.SetIfExists(ctx, "two"); err != nil || !ok {
				t.Fatalf("SetIfExists on present = %v, %v; want true, nil", ok, err)
			}
			if old, ok, err := b.GetAndSet(ctx, "three"); err != nil || !ok || old != "two" {
				t.Fatalf("GetAndSet = %q, %v, %v; want two, true, nil", old, ok, err)
			}
			if ok, err := b.CompareAndSet(ctx, "two", "four"); err != nil || ok {
				t.Fatalf("CompareAndSet(stale) = %v, %v; want false, nil", ok, err)
			}
			mustBucket(t, ctx, b, "three")
			if ok, err := b.CompareAndSet(ctx, "three", "four"); err != nil || !ok {
				t.Fatalf("CompareAndSet(current) = %v, %v; want true, nil", ok, err)
			}
			if v, ok, err := b.GetAndDelete(ctx); err != nil || !ok || v != "four" {
				t.Fatalf("GetAndDelete = %q, %v, %v; want four, true, nil", v, ok, err)
			}
			if ok, err := b.CompareAndSet(ctx, "", "x"); err != nil || ok {
				t.Fatalf("CompareAndSet on missing = %v, %v; want false, nil", ok, err)
			}
			if old, ok, err := b.GetAndSet(ctx, "five"); err != nil || ok || old != "" {
				t.Fatalf("GetAndSet on missing = %q, %v, %v; want \"\", false, nil", old, ok, err)
			}
			if ok, err := b.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v; want true, nil", ok, err)
			}
			if ok, err := b.Delete(ctx); err != nil || ok {
				t.Fatalf("Delete again = %v, %v; want false, nil", ok, err)
			}
		}
	})
}

func mustBucket[T comparable](t *testing.T, ctx context.Context, b *Bucket[T], want T) {
	t.Helper()
	if v, ok, err := b.Get(ctx); err != nil || !ok || v != want {
		t.Fatalf("Get = %v, %v, %v; want %v, true, nil", v, ok, err, want)
	}
}

type point struct {
	X, Y  int
	Label string `msgpack:"label" json:"label"`
}

// TestBucketStructAndAny stores a struct and reads plain values into any.
func TestBucketStructAndAny(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for _, codec := range []Codec{MsgpackCodec{}, JSONCodec{}} {
		b := GetBucket[point](c, uniqueName(t, rdb), WithCodec(codec))
		want := point{X: 1, Y: -2, Label: "p"}
		if err := b.Set(ctx, want); err != nil {
			t.Fatal(err)
		}
		mustBucket(t, ctx, b, want)
		if ok, err := b.CompareAndSet(ctx, want, point{X: 3}); err != nil || !ok {
			t.Fatalf("%s CompareAndSet(struct) = %v, %v; want true, nil", codec.Name(), ok, err)
		}
		mustBucket(t, ctx, b, point{X: 3})
	}
	name := uniqueName(t, rdb)
	for _, v := range []any{"s", int64(-5), int64(300), 2.5, true} {
		if err := GetBucket[any](c, name).Set(ctx, v); err != nil {
			t.Fatal(err)
		}
		got, ok, err := GetBucket[any](c, name).Get(ctx)
		if err != nil || !ok || got != v {
			t.Errorf("Bucket[any] Get = %#v, %v, %v; want %#v", got, ok, err, v)
		}
	}
}

// TestBucketTTL checks expiry: SetWithTTL sets it, Set clears it, TTL
// reports it.
func TestBucketTTL(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	b := GetBucket[int64](c, uniqueName(t, rdb))
	if ttl, ok, err := b.TTL(ctx); err != nil || ok || ttl != 0 {
		t.Fatalf("TTL on missing = %v, %v, %v; want 0, false, nil", ttl, ok, err)
	}
	if err := b.SetWithTTL(ctx, 7, time.Hour); err != nil {
		t.Fatal(err)
	}
	if ttl, ok, err := b.TTL(ctx); err != nil || !ok || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("TTL after SetWithTTL(1h) = %v, %v, %v; want about 1h, true, nil", ttl, ok, err)
	}
	if err := b.Set(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if ttl, ok, err := b.TTL(ctx); err != nil || !ok || ttl != 0 {
		t.Fatalf("TTL after Set = %v, %v, %v; want 0, true, nil", ttl, ok, err)
	}
	if ok, err := b.SetIfExistsWithTTL(ctx, 9, time.Hour); err != nil || !ok {
		t.Fatalf("SetIfExistsWithTTL = %v, %v", ok, err)
	}
	if ms := rdb.PTTL(ctx, b.Name()).Val(); ms <= 59*time.Minute {
		t.Fatalf("PTTL after SetIfExistsWithTTL(1h) = %v", ms)
	}
	b.Delete(ctx)
	if ok, err := b.SetIfAbsentWithTTL(ctx, 10, 50*time.Millisecond); err != nil || !ok {
		t.Fatalf("SetIfAbsentWithTTL = %v, %v", ok, err)
	}
	eventually(t, 10*time.Second, "bucket set with a 50ms TTL expires", func() bool {
		_, ok, err := b.Get(ctx)
		return err == nil && !ok
	})
}

// TestBucketBadInput checks every bad input: the sentinel error and an
// unchanged key.
func TestBucketBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)

	// Empty name and closed client.
	closed := newClient(t, rdb, nil)
	closed.Close()
	for _, tc := range []struct {
		name string
		b    *Bucket[string]
		want error
	}{
		{"empty name", GetBucket[string](c, ""), ErrEmptyName},
		{"closed client", GetBucket[string](closed, uniqueName(t, rdb)), ErrClientClosed},
	} {
		for _, nc := range bucketCalls(ctx, tc.b, "v") {
			if err := nc.call(); !errors.Is(err, tc.want) {
				t.Errorf("%s: %s = %v; want %v", tc.name, nc.op, err, tc.want)
			}
		}
	}

	// A hash at the key: ErrWrongType, hash unchanged.
	name := uniqueName(t, rdb)
	rdb.HSet(ctx, name, "f", "v")
	before := keyState(t, rdb, name)
	for _, nc := range bucketCalls(ctx, GetBucket[string](c, name), "v") {
		if nc.op == "Delete" || nc.op == "TTL" {
			continue // they work on a key of any type, as in Redisson
		}
		if err := nc.call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("hash at key: %s = %v; want ErrWrongType", nc.op, err)
		}
		if after := keyState(t, rdb, name); after != before {
			t.Fatalf("hash at key: %s changed Redis: %s -> %s", nc.op, before, after)
		}
	}

	// Bad TTLs and nil values leave the stored value alone.
	b := GetBucket[*point](c, uniqueName(t, rdb))
	if err := b.Set(ctx, &point{X: 1}); err != nil {
		t.Fatal(err)
	}
	before = keyState(t, rdb, b.Name())
	p := &point{X: 2}
	for _, tc := range []struct {
		op   string
		err  error
		want error
	}{
		{"SetWithTTL(0)", b.SetWithTTL(ctx, p, 0), ErrNegativeDuration},
		{"SetWithTTL(-1s)", b.SetWithTTL(ctx, p, -time.Second), ErrNegativeDuration},
		{"SetIfExistsWithTTL(0)", second(b.SetIfExistsWithTTL(ctx, p, 0)), ErrNegativeDuration},
		{"SetIfAbsentWithTTL(-1)", second(b.SetIfAbsentWithTTL(ctx, p, -1)), ErrNegativeDuration},
		{"Set(nil)", b.Set(ctx, nil), ErrNilValue},
		{"SetIfExists(nil)", second(b.SetIfExists(ctx, nil)), ErrNilValue},
		{"GetAndSet(nil)", third(b.GetAndSet(ctx, nil)), ErrNilValue},
		{"CompareAndSet(x, nil)", second(b.CompareAndSet(ctx, &point{X: 1}, nil)), ErrNilValue},
		{"CompareAndSet(nil, x)", second(b.CompareAndSet(ctx, nil, p)), ErrNilValue},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s = %v; want %v", tc.op, tc.err, tc.want)
		}
		if after := keyState(t, rdb, b.Name()); after != before {
			t.Fatalf("%s changed Redis: %s -> %s", tc.op, before, after)
		}
	}

	// Bytes that do not decode: ErrCodec naming the bucket and codec.
	name = uniqueName(t, rdb)
	rdb.Set(ctx, name, "hello", 0) // StringCodec text, not msgpack
	before = keyState(t, rdb, name)
	_, _, err := GetBucket[int64](c, name).Get(ctx)
	if !errors.Is(err, ErrCodec) || !strings.Contains(err.Error(), strconv.Quote(name)) || !strings.Contains(err.Error(), "msgpack") {
		t.Errorf("Get of undecodable bytes = %v; want ErrCodec naming %q and msgpack", err, name)
	}
	if after := keyState(t, rdb, name); after != before {
		t.Fatalf("Get changed Redis: %s -> %s", before, after)
	}
	// A value that does not encode: nothing written.
	sb := GetBucket[point](c, uniqueName(t, rdb), WithCodec(StringCodec{}))
	if err := sb.Set(ctx, point{}); !errors.Is(err, ErrCodec) {
		t.Errorf("StringCodec Set(struct) = %v; want ErrCodec", err)
	}
	if n := rdb.Exists(ctx, sb.Name()).Val(); n != 0 {
		t.Errorf("StringCodec Set(struct) created the key")
	}
}

func second[A, B any](_ A, b B) B        { return b }
func third[A, B, C any](_ A, _ B, c C) C { return c }

type namedCall struct {
	op   string
	call func() error
}

// bucketCalls lists every Bucket call, Delete last.
func bucketCalls[T any](ctx context.Context, b *Bucket[T], v T) []namedCall {
	return []namedCall{
		{"Get", func() error { return third(b.Get(ctx)) }},
		{"Set", func() error { return b.Set(ctx, v) }},
		{"SetWithTTL", func() error { return b.SetWithTTL(ctx, v, time.Second) }},
		{"SetIfAbsent", func() error { return second(b.SetIfAbsent(ctx, v)) }},
		{"SetIfAbsentWithTTL", func() error { return second(b.SetIfAbsentWithTTL(ctx, v, time.Second)) }},
		{"SetIfExists", func() error { return second(b.SetIfExists(ctx, v)) }},
		{"SetIfExistsWithTTL", func() error { return second(b.SetIfExistsWithTTL(ctx, v, time.Second)) }},
		{"GetAndSet", func() error { return third(b.GetAndSet(ctx, v)) }},
		{"GetAndDelete", func() error { return third(b.GetAndDelete(ctx)) }},
		{"CompareAndSet", func() error { return second(b.CompareAndSet(ctx, v, v)) }},
		{"TTL", func() error { return third(b.TTL(ctx)) }},
		{"Delete", func() error { return second(b.Delete(ctx)) }},
	}
}

// TestBucketRedissonBytes reads values stored as Redisson writes them (the
// testdata fixtures) and checks that Set stores the same bytes.
func TestBucketRedissonBytes(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for _, tc := range []struct {
		file  string
		codec Codec
	}{{"msgpack.txt", MsgpackCodec{}}, {"string.txt", StringCodec{}}, {"json.txt", JSONCodec{}}} {
		for _, fx := range loadFixtures(t, tc.file) {
			name := uniqueName(t, rdb)
			if err := rdb.Set(ctx, name, fx.data, 0).Err(); err != nil {
				t.Fatal(err)
			}
			var got, stored any
			var err error
			switch want := fx.value(t).(type) {
			case string:
				got, stored, err = bucketRoundTrip(ctx, rdb, GetBucket[string](c, name, WithCodec(tc.codec)), want)
			case int64:
				got, stored, err = bucketRoundTrip(ctx, rdb, GetBucket[int64](c, name, WithCodec(tc.codec)), want)
			case float64:
				got, stored, err = bucketRoundTrip(ctx, rdb, GetBucket[float64](c, name, WithCodec(tc.codec)), want)
			case bool:
				got, stored, err = bucketRoundTrip(ctx, rdb, GetBucket[bool](c, name, WithCodec(tc.codec)), want)
			default:
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", fx.where, err)
				continue
			}
			if want := fx.value(t); got != want {
				t.Errorf("%s: Get = %#v, want %#v", fx.where, got, want)
			}
			if !bytes.Equal([]byte(stored.(string)), fx.goData) {
				t.Errorf("%s: Set stored %x, want %x", fx.where, stored, fx.goData)
			}
		}
	}
}

// bucketRoundTrip reads the bucket, writes v back, and returns what Get
// returned and the raw bytes Set stored.
func bucketRoundTrip[T any](ctx context.Context, rdb redis.UniversalClient, b *Bucket[T], v T) (any, any, error) {
	got, ok, err := b.Get(ctx)
	if err != nil || !ok {
		return nil, nil, errors.Join(err, errors.New("missing"))
	}
	if err := b.Set(ctx, v); err != nil {
		return nil, nil, err
	}
	raw, err := rdb.Get(ctx, b.Name()).Result()
	return got, raw, err
}

// TestTypedCancelledContext: a call made with a cancelled context returns
// context.Canceled and writes nothing.
func TestTypedCancelledContext(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	name := uniqueName(t, rdb)
	for _, nc := range []namedCall{
		{"Bucket.Set", func() error { return GetBucket[string](c, name).Set(ctx, "v") }},
		{"Bucket.SetIfAbsent", func() error { return second(GetBucket[string](c, name).SetIfAbsent(ctx, "v")) }},
		{"AtomicLong.IncrementAndGet", func() error { return second(c.GetAtomicLong(name).IncrementAndGet(ctx)) }},
		{"AtomicLong.Set", func() error { return c.GetAtomicLong(name).Set(ctx, 1) }},
		{"Map.Put", func() error { return third(GetMap[string, int64](c, name).Put(ctx, "k", 1)) }},
		{"Map.FastPut", func() error { return second(GetMap[string, int64](c, name).FastPut(ctx, "k", 1)) }},
		{"Map.AddAndGet", func() error { return second(GetMap[string, int64](c, name).AddAndGet(ctx, "k", 1)) }},
	} {
		if err := nc.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v; want context.Canceled", nc.op, err)
		}
		if n := rdb.Exists(context.Background(), name).Val(); n != 0 {
			t.Fatalf("%s with a cancelled context wrote the key", nc.op)
		}
	}
}

// TestBucketMaxDurationTTL checks that the longest time.Duration is a valid
// TTL (292 years, well inside Redis's range): rounding it up to
// milliseconds does not overflow into a negative PX.
func TestBucketMaxDurationTTL(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	b := GetBucket[string](c, name)
	if err := b.SetWithTTL(ctx, "v", time.Duration(math.MaxInt64)); err != nil {
		t.Fatalf("SetWithTTL(MaxInt64 ns) = %v; want nil", err)
	}
	if ttl, ok, err := b.TTL(ctx); err != nil || !ok || ttl < 200*365*24*time.Hour {
		t.Fatalf("TTL = %v, %v, %v; want about 292 years", ttl, ok, err)
	}
}
