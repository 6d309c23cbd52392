package redisson

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// The text "1" stored by HSET is the MessagePack integer 49: the default
// codec reads it so (documented), a strict one refuses it with ErrCodec,
// except into an int8..int32, which the codec itself writes bare. JSON
// reads it as 1; strict JSON refuses it for an int. Nothing is written.
func TestStrictCodecRefusesForeignText(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	mpName, jsName, bName := uniqueName(t, rdb), uniqueName(t, rdb), uniqueName(t, rdb)
	mpField, _ := MsgpackCodec{}.Marshal("k")
	jsField, _ := JSONCodec{}.Marshal("k")
	if err := rdb.HSet(ctx, mpName, string(mpField), "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, jsName, string(jsField), "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, bName, "1", 0).Err(); err != nil {
		t.Fatal(err)
	}

	if v, ok, err := GetMap[string, int](c, mpName).Get(ctx, "k"); err != nil || !ok || v != 49 {
		t.Errorf("msgpack Get = %v, %v, %v; want the documented 49, true, nil", v, ok, err)
	}
	strict := WithCodec(MsgpackCodec{Strict: true})
	if v, _, err := GetMap[string, int](c, mpName, strict).Get(ctx, "k"); !errors.Is(err, ErrCodec) {
		t.Errorf("strict msgpack Get into int = %v, %v; want ErrCodec", v, err)
	}
	if v, _, err := GetMap[string, int64](c, mpName, strict).Get(ctx, "k"); !errors.Is(err, ErrCodec) {
		t.Errorf("strict msgpack Get into int64 = %v, %v; want ErrCodec", v, err)
	}
	if v, _, err := GetMap[string, string](c, mpName, strict).Get(ctx, "k"); !errors.Is(err, ErrCodec) {
		t.Errorf("strict msgpack Get into string = %q, %v; want ErrCodec", v, err)
	}
	if v, ok, err := GetMap[string, int32](c, mpName, strict).Get(ctx, "k"); err != nil || !ok || v != 49 {
		t.Errorf("strict msgpack Get into int32 = %v, %v, %v; want 49, true, nil (the codec writes int32(49) as 0x31)", v, ok, err)
	}
	if v, _, err := GetBucket[any](c, bName, strict).Get(ctx); !errors.Is(err, ErrCodec) {
		t.Errorf("strict msgpack Bucket[any].Get = %v, %v; want ErrCodec", v, err)
	}
	if v, _, err := GetBucket[any](c, bName).Get(ctx); err != nil || v != int64(49) {
		t.Errorf("msgpack Bucket[any].Get = %v (%T), %v; want int64 49", v, v, err)
	}

	if v, ok, err := GetMap[string, int](c, jsName, WithCodec(JSONCodec{})).Get(ctx, "k"); err != nil || !ok || v != 1 {
		t.Errorf("json Get = %v, %v, %v; want 1, true, nil", v, ok, err)
	}
	if v, _, err := GetMap[string, int](c, jsName, WithCodec(JSONCodec{Strict: true})).Get(ctx, "k"); !errors.Is(err, ErrCodec) {
		t.Errorf("strict json Get into int = %v, %v; want ErrCodec", v, err)
	}
	if got := rdb.HGet(ctx, mpName, string(mpField)).Val(); got != "1" {
		t.Errorf("field after the reads = %q, want \"1\" (unchanged)", got)
	}
}

type strictSample struct {
	A string
	B []int
	M map[string]float64
}

// A strict codec reads back everything it writes, through Redis too.
func TestStrictCodecReadsItsOwnWrites(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	values := []any{"", "text", "日本", 0, 49, -1, int64(math.MaxInt64), int8(-5), int32(49), uint64(math.MaxUint64),
		1.5, float32(0.1), 3.0, true, []byte{0, 1}, map[string]int{"b": 1, "a": 2, "c": 3},
		strictSample{A: "x", B: []int{1, 2}, M: map[string]float64{"z": 1, "y": 2}}}
	for _, codec := range []Codec{MsgpackCodec{Strict: true}, JSONCodec{Strict: true}} {
		for _, v := range values {
			if _, ok := codec.(JSONCodec); ok {
				if _, isBytes := v.([]byte); isBytes {
					continue // JSON writes bytes as base64 text, read back as a string into any
				}
			}
			b, err := codec.Marshal(v)
			if err != nil {
				t.Fatalf("%s Marshal(%#v): %v", codec.Name(), v, err)
			}
			p := reflect.New(reflect.TypeOf(v))
			if err := codec.Unmarshal(b, p.Interface()); err != nil {
				t.Errorf("%s strict Unmarshal of its own %#v (% x): %v", codec.Name(), v, b, err)
			} else if got := p.Elem().Interface(); !reflect.DeepEqual(got, v) {
				t.Errorf("%s read %#v back as %#v", codec.Name(), v, got)
			}
		}
		m := GetMap[string, any](c, uniqueName(t, rdb), WithCodec(codec))
		for i, v := range values {
			switch v.(type) {
			case []byte, int8, int32, float32:
				continue // into any: int64, float64, written otherwise (documented)
			}
			key := string(rune('a' + i))
			if _, _, err := m.Put(ctx, key, v); err != nil {
				t.Fatalf("%s Put(%v): %v", codec.Name(), v, err)
			}
			if _, ok, err := m.Get(ctx, key); err != nil || !ok {
				t.Errorf("%s strict Map[string, any].Get of %#v: %v, %v", codec.Name(), v, ok, err)
			}
		}
	}
	// NaN is never DeepEqual to itself: round trip it apart.
	for _, codec := range []Codec{MsgpackCodec{Strict: true}} {
		b, _ := codec.Marshal(math.NaN())
		var f float64
		if err := codec.Unmarshal(b, &f); err != nil || !math.IsNaN(f) {
			t.Errorf("%s strict NaN: %v, %v", codec.Name(), f, err)
		}
	}
}
