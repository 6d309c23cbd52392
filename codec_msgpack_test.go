package redisson

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// TestMsgpackMapEncodingCanonical checks that, although a Go map's iteration order is
// random, a value holding a map encodes to the same bytes every time: Bucket.CompareAndSet compares bytes and a BloomFilter hashes
// them (a different encoding is a false negative).
func TestMsgpackMapEncodingCanonical(t *testing.T) {
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

// TestMsgpackCanonicalFormsKeptAndStable checks that the map canonicalizer keeps every
// MessagePack form intact (ints of each width, floats, str/bin of each
// length class, ext/timestamp, big arrays and maps) and gives one byte
// string for one value.
func TestMsgpackCanonicalFormsKeptAndStable(t *testing.T) {
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

// TestMsgpackIntegerOutOfRangeIsCodecError checks that an integer that does
// not fit the Go type it is read into (a Java Long 300 into int8, -1 into
// uint64, 2^63 into int64) is an ErrCodec error, as with StringCodec and
// JSONCodec, not a silently wrapped value.
func TestMsgpackIntegerOutOfRangeIsCodecError(t *testing.T) {
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
