package redisson

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Review tests for the typed objects: each one pins a defect found in review
// (see the commit message), against the shared real redis-server.

// TestReviewMsgpackMapEncodingCanonical: a Go map's iteration order is
// random, so a value holding a map must still encode to the same bytes
// every time: Bucket.CompareAndSet compares bytes and a BloomFilter hashes
// them (a different encoding is a false negative).
func TestReviewMsgpackMapEncodingCanonical(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)

	val := map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8}
	b := GetBucket[map[string]int](c, name)
	if err := b.Set(ctx, val); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		ok, err := b.CompareAndSet(ctx, val, val)
		if err != nil || !ok {
			t.Fatalf("round %d: CompareAndSet(v, v) with v equal to the stored map = %v, %v; want true", i, ok, err)
		}
	}

	f := GetBloomFilter[map[string]any](c, name+":bloom")
	t.Cleanup(func() { rdb.Del(context.Background(), name+":bloom", suffixName(name+":bloom", "config")) })
	if _, err := f.TryInit(ctx, 1000, 0.01); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		v := map[string]any{"i": i, "a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7}
		if _, err := f.Add(ctx, v); err != nil {
			t.Fatal(err)
		}
		if in, err := f.Contains(ctx, v); err != nil || !in {
			t.Fatalf("Contains(%v) right after Add = %v, %v; want true (a bloom filter has no false negatives)", v, in, err)
		}
	}
}

// TestReviewMapAnyKeyUnhashable: a Map[any, V] whose hash holds a field
// that decodes to a slice or a map (a Java List key, or a Go slice put as
// key) must not panic in ReadAll; it is a codec error.
func TestReviewMapAnyKeyUnhashable(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	m := GetMap[any, string](c, name)
	if _, err := m.FastPut(ctx, []any{"x", int64(1)}, "v"); err != nil {
		t.Fatal(err)
	}
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("ReadAll panicked: %v", r)
			}
		}()
		_, err = m.ReadAll(ctx)
	}()
	if !errors.Is(err, ErrCodec) {
		t.Fatalf("ReadAll of a hash with a list key = %v; want ErrCodec", err)
	}
}

// TestReviewMsgpackIntegerRange: an integer that does not fit the Go type
// it is read into (a Java Long 300 into int8, -1 into uint64, 2^63 into
// int64) is an ErrCodec error, as StringCodec and JSONCodec already do, not
// a silently wrapped value.
func TestReviewMsgpackIntegerRange(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)

	if err := GetBucket[int64](c, name).Set(ctx, 300); err != nil {
		t.Fatal(err)
	}
	if v, _, err := GetBucket[int8](c, name).Get(ctx); !errors.Is(err, ErrCodec) {
		t.Errorf("Bucket[int8].Get of 300 = %d, %v; want ErrCodec", v, err)
	}
	if err := GetBucket[int64](c, name).Set(ctx, 5_000_000_000); err != nil {
		t.Fatal(err)
	}
	if v, _, err := GetBucket[int32](c, name).Get(ctx); !errors.Is(err, ErrCodec) {
		t.Errorf("Bucket[int32].Get of 5e9 = %d, %v; want ErrCodec", v, err)
	}
	if err := GetBucket[int64](c, name).Set(ctx, -1); err != nil {
		t.Fatal(err)
	}
	if v, _, err := GetBucket[uint64](c, name).Get(ctx); !errors.Is(err, ErrCodec) {
		t.Errorf("Bucket[uint64].Get of -1 = %d, %v; want ErrCodec", v, err)
	}
	if err := GetBucket[uint64](c, name).Set(ctx, 1<<63); err != nil {
		t.Fatal(err)
	}
	if v, _, err := GetBucket[int64](c, name).Get(ctx); !errors.Is(err, ErrCodec) {
		t.Errorf("Bucket[int64].Get of 2^63 = %d, %v; want ErrCodec", v, err)
	}

	// AddAndGet's doc: "A sum that does not fit V (an int8 past 127, say)
	// is stored and then reported as ErrCodec on decode."
	m := GetMap[string, int8](c, name+":map")
	t.Cleanup(func() { rdb.Del(context.Background(), name+":map") })
	if v, err := m.AddAndGet(ctx, "k", 100); err != nil || v != 100 {
		t.Fatalf("AddAndGet(100) = %d, %v", v, err)
	}
	if v, err := m.AddAndGet(ctx, "k", 100); !errors.Is(err, ErrCodec) {
		t.Errorf("int8 AddAndGet 100+100 = %d, %v; want ErrCodec as documented", v, err)
	}
}

// TestReviewMapAddAndGetStoredKind: with MsgpackCodec, a stored Java Double
// (float 64) is not an integer of V=int64's kind, nor a stored Long one of
// V=float64's: the doc promises ErrCodec and an unchanged map, not a value
// silently rewritten in the other type (which Java then reads as an Integer
// where it wrote a Double).
func TestReviewMapAddAndGetStoredKind(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	field := "\xa1k"                                  // msgpack "k"
	double3 := "\xcb\x40\x08\x00\x00\x00\x00\x00\x00" // Jackson's Double 3.0
	long5 := "\x05"                                   // Jackson's Long 5
	for _, tc := range []struct {
		stored string
		add    func() (any, error)
	}{
		{double3, func() (any, error) { return GetMap[string, int64](c, name).AddAndGet(ctx, "k", 1) }},
		{long5, func() (any, error) { return GetMap[string, float64](c, name).AddAndGet(ctx, "k", 0.5) }},
	} {
		rdb.HSet(ctx, name, field, tc.stored)
		v, err := tc.add()
		got, _ := rdb.HGet(ctx, name, field).Result()
		if !errors.Is(err, ErrCodec) || got != tc.stored {
			t.Errorf("AddAndGet on stored %x = %v, %v, now stored %x; want ErrCodec and %x unchanged", tc.stored, v, err, got, tc.stored)
		}
	}
}

// TestReviewStringCodecNilTextMarshaler: StringCodec given a nil pointer
// whose type has a value-receiver MarshalText (*time.Time) must return an
// error, not panic; BloomFilter.Add reaches it without a nil check.
func TestReviewStringCodecNilTextMarshaler(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), suffixName(name, "config")) })
	f := GetBloomFilter[*time.Time](c, name, WithCodec(StringCodec{}))
	if _, err := f.TryInit(ctx, 100, 0.01); err != nil {
		t.Fatal(err)
	}
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Add(nil *time.Time) with StringCodec panicked: %v", r)
			}
		}()
		_, err = f.Add(ctx, nil)
	}()
	if !errors.Is(err, ErrNilValue) && !errors.Is(err, ErrCodec) {
		t.Fatalf("Add(nil) = %v; want ErrNilValue or ErrCodec", err)
	}
}

// TestReviewBucketHugeTTL: the longest time.Duration is a valid TTL (292
// years, well inside Redis's range); rounding it up to milliseconds must not
// overflow into a negative PX.
func TestReviewBucketHugeTTL(t *testing.T) {
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

// TestReviewAtomicLongOverflowError: an AtomicLong overflow is not a
// semaphore's "invalid number of permits".
func TestReviewAtomicLongOverflowError(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	a := c.GetAtomicLong(uniqueName(t, rdb))
	if err := a.Set(ctx, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	_, err := a.IncrementAndGet(ctx)
	if err == nil || errors.Is(err, ErrInvalidPermits) {
		t.Fatalf("IncrementAndGet past MaxInt64 = %v; want an overflow error that is not ErrInvalidPermits", err)
	}
}

// TestReviewMapFloatZeroKeys: 0.0 and -0.0 are one key in Go (==) but two
// fields in Redis, so ReadAll silently drops one of the two entries Size
// counts.
func TestReviewMapFloatZeroKeys(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	m := GetMap[float64, string](c, uniqueName(t, rdb))
	for i, k := range []float64{0, math.Copysign(0, -1)} {
		if _, err := m.FastPut(ctx, k, strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := m.Size(ctx)
	all, err2 := m.ReadAll(ctx)
	if err != nil || err2 != nil || int64(len(all)) != n {
		t.Fatalf("Size = %d, %v; ReadAll = %v (%d entries), %v; want them to agree", n, err, all, len(all), err2)
	}
}

// TestReviewMsgpackCanonicalForms: the map canonicalizer keeps every
// MessagePack form intact (ints of each width, floats, str/bin of each
// length class, ext/timestamp, big arrays and maps) and gives one byte
// string for one value.
func TestReviewMsgpackCanonicalForms(t *testing.T) {
	type inner struct {
		M  map[string]string
		At time.Time
	}
	big := make(map[string]any, 70000)
	for i := range 70000 {
		big[strconv.Itoa(i)] = i
	}
	v := map[string]any{
		"ints":   []any{int64(1), int64(-1), int64(200), int64(-200), int64(70000), int64(-70000), int64(5e9), int64(-5e9), uint64(1 << 63)},
		"floats": []any{float32(1.5), 2.5},
		"strs":   []any{"", strings.Repeat("s", 40), strings.Repeat("s", 300), strings.Repeat("s", 70000)},
		"bins":   []any{[]byte{}, bytes.Repeat([]byte{1}, 300), bytes.Repeat([]byte{2}, 70000)},
		"misc":   []any{nil, true, false},
		"inner":  inner{M: map[string]string{"c": "3", "a": "1", "b": "2"}, At: time.Unix(1700000000, 5)},
		"big":    big,
		"arr":    make([]any, 70000),
	}
	first, err := MsgpackCodec{}.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := MsgpackCodec{}.Marshal(v)
		if err != nil || !bytes.Equal(again, first) {
			t.Fatalf("second encoding differs (err %v)", err)
		}
	}
	var plain bytes.Buffer
	enc := msgpack.NewEncoder(&plain)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := msgpack.Unmarshal(first, &a); err != nil {
		t.Fatal(err)
	}
	if err := msgpack.Unmarshal(plain.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("canonical bytes decode to another value")
	}
	for i := 0; i < len(first); i += len(first)/40 + 1 { // a truncation is an error, not a panic
		if _, err := canonicalMsgpack(first[:i]); err == nil {
			t.Fatalf("canonicalMsgpack of %d of %d bytes: no error", i, len(first))
		}
	}
}

// TestReviewTypedNilCodec: WithCodec of a typed nil pointer ((*JSONCodec)
// (nil)) keeps the default codec like WithCodec(nil), instead of panicking
// on the first call (the built-in codecs have value receivers).
func TestReviewTypedNilCodec(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	b := GetBucket[string](c, uniqueName(t, rdb), WithCodec((*JSONCodec)(nil)))
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Set with WithCodec((*JSONCodec)(nil)) panicked: %v", r)
		}
	}()
	if err := b.Set(ctx, "v"); err != nil {
		t.Fatalf("Set = %v", err)
	}
	if got, ok, err := b.Get(ctx); err != nil || !ok || got != "v" {
		t.Fatalf("Get = %q, %v, %v; want v", got, ok, err)
	}
}

// Options.Codec set to a typed nil pointer falls back to the default codec
// instead of panicking on the first call.
func TestReviewTypedNilDefaultCodec(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, &Options{Codec: (*JSONCodec)(nil)})
	ctx := testCtx(t, time.Minute)
	b := GetBucket[string](c, uniqueName(t, rdb))
	if err := b.Set(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get(ctx); err != nil || !ok || v != "v" {
		t.Fatalf("Get = %q, %v, %v", v, ok, err)
	}
	if _, ok := c.Options().Codec.(MsgpackCodec); !ok {
		t.Fatalf("Options().Codec = %T; want the default MsgpackCodec", c.Options().Codec)
	}
}

// A nil pointer is refused by BloomFilter.Add and Contains with ErrNilValue,
// as by Bucket and Map, and sets no bit.
func TestReviewBloomFilterNilValue(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	f := GetBloomFilter[*string](c, name)
	if _, err := f.TryInit(ctx, 100, 0.01); err != nil {
		t.Fatal(err)
	}
	before := rdb.Get(ctx, name).Val()
	if _, err := f.Add(ctx, nil); !errors.Is(err, ErrNilValue) {
		t.Fatalf("Add(nil) = %v; want ErrNilValue", err)
	}
	if _, err := f.Contains(ctx, nil); !errors.Is(err, ErrNilValue) {
		t.Fatalf("Contains(nil) = %v; want ErrNilValue", err)
	}
	if rdb.Get(ctx, name).Val() != before {
		t.Fatal("Add(nil) changed the bitmap")
	}
}
