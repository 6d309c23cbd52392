package redisson

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// fixture is one row of a testdata/redisson file: the bytes a Redisson codec
// writes for one plain Java value.
type fixture struct {
	where    string // file:line
	javaType string
	literal  string
	data     []byte // what Java writes
	goData   []byte // what Go writes, when it differs
}

func loadFixtures(t *testing.T, file string) []fixture {
	t.Helper()
	f, err := os.Open("testdata/redisson/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixture
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Fields(text)
		if len(cols) < 3 || len(cols) > 4 {
			t.Fatalf("%s:%d: want 3 or 4 columns, got %q", file, line, text)
		}
		fx := fixture{where: file + ":" + strconv.Itoa(line), javaType: cols[0], literal: cols[1]}
		if fx.data, err = hex.DecodeString(cols[2]); err != nil {
			t.Fatalf("%s: %v", fx.where, err)
		}
		fx.goData = fx.data
		if len(cols) == 4 {
			if fx.goData, err = hex.DecodeString(cols[3]); err != nil {
				t.Fatalf("%s: %v", fx.where, err)
			}
		}
		out = append(out, fx)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no fixtures", file)
	}
	return out
}

// value returns the Go value of the fixture's natural Go type: string,
// int64 (Long), int32 (Integer), float64 (Double), float32 (Float), bool,
// []byte, or a nil *string (null).
func (fx fixture) value(t *testing.T) any {
	t.Helper()
	var v any
	var err error
	switch fx.javaType {
	case "String":
		v, err = strconv.Unquote(fx.literal)
	case "Long":
		v, err = strconv.ParseInt(fx.literal, 10, 64)
	case "Integer":
		var n int64
		n, err = strconv.ParseInt(fx.literal, 10, 32)
		v = int32(n)
	case "Double":
		v, err = strconv.ParseFloat(fx.literal, 64)
	case "Float":
		var f float64
		f, err = strconv.ParseFloat(fx.literal, 32)
		v = float32(f)
	case "Boolean":
		v, err = strconv.ParseBool(fx.literal)
	case "byte[]":
		v, err = hex.DecodeString(fx.literal)
	case "null":
		v = (*string)(nil)
	default:
		t.Fatalf("%s: unknown Java type %q", fx.where, fx.javaType)
	}
	if err != nil {
		t.Fatalf("%s: %v", fx.where, err)
	}
	return v
}

// looseValue is what the msgpack codec decodes the fixture into for a Go
// interface: int64 for every integer, float64 for every float.
func (fx fixture) looseValue(t *testing.T) any {
	switch v := fx.value(t).(type) {
	case int32:
		return int64(v)
	case float32:
		return float64(v)
	case *string:
		return nil
	default:
		return v
	}
}

// TestCodecRedissonFixtures checks, for every fixture, that Go decodes the
// bytes Redisson writes into the natural Go type with the right value, and
// that Go encodes that value into the bytes Redisson writes (or the listed
// Go bytes, which Java reads as the same value).
func TestCodecRedissonFixtures(t *testing.T) {
	for _, tc := range []struct {
		file  string
		codec Codec
	}{
		{"msgpack.txt", MsgpackCodec{}},
		{"string.txt", StringCodec{}},
		{"json.txt", JSONCodec{}},
	} {
		for _, fx := range loadFixtures(t, tc.file) {
			want := fx.value(t)
			ptr := reflect.New(reflect.TypeOf(want))
			if err := tc.codec.Unmarshal(fx.data, ptr.Interface()); err != nil {
				t.Errorf("%s: %s Unmarshal(%x) into %T: %v", fx.where, tc.codec.Name(), fx.data, want, err)
			} else if got := ptr.Elem().Interface(); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s decoded %#v, want %#v", fx.where, tc.codec.Name(), got, want)
			}
			if _, isNull := want.(*string); isNull && tc.codec.Name() == "string" {
				continue
			}
			b, err := tc.codec.Marshal(want)
			if err != nil {
				t.Errorf("%s: %s Marshal(%#v): %v", fx.where, tc.codec.Name(), want, err)
			} else if !bytes.Equal(b, fx.goData) {
				t.Errorf("%s: %s Marshal(%#v) = %x, want %x", fx.where, tc.codec.Name(), want, b, fx.goData)
			}
			if tc.codec.Name() == "msgpack" {
				var got any
				if err := tc.codec.Unmarshal(fx.data, &got); err != nil {
					t.Errorf("%s: Unmarshal into any: %v", fx.where, err)
				} else if lw := fx.looseValue(t); !reflect.DeepEqual(got, lw) {
					t.Errorf("%s: decoded into any %#v (%T), want %#v (%T)", fx.where, got, got, lw, lw)
				}
			}
		}
	}
}

// TestCodecStrictDecode checks that bytes which do not hold one value of the
// target type are errors, not zero values.
func TestCodecStrictDecode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec Codec
		data  []byte
		into  any
	}{
		{"msgpack nil into int64", MsgpackCodec{}, []byte{0xc0}, new(int64)},
		{"msgpack nil into string", MsgpackCodec{}, []byte{0xc0}, new(string)},
		{"msgpack nil into struct", MsgpackCodec{}, []byte{0xc0}, new(struct{ A int })},
		{"msgpack trailing bytes (JSON 42)", MsgpackCodec{}, []byte("42"), new(int64)},
		{"msgpack str into int64", MsgpackCodec{}, []byte{0xa1, '1'}, new(int64)},
		{"msgpack empty", MsgpackCodec{}, nil, new(int64)},
		{"json null into int64", JSONCodec{}, []byte("null"), new(int64)},
		{"json text into int64", JSONCodec{}, []byte(`"42"`), new(int64)},
		{"string text into int64", StringCodec{}, []byte("4x"), new(int64)},
		{"string overflow int8", StringCodec{}, []byte("300"), new(int8)},
		{"string into struct", StringCodec{}, []byte("x"), new(struct{})},
		{"bytes into int", BytesCodec{}, []byte("x"), new(int)},
	} {
		if err := tc.codec.Unmarshal(tc.data, tc.into); err == nil {
			t.Errorf("%s: Unmarshal(%x) into %T = nil error, value %v; want an error", tc.name, tc.data, tc.into, reflect.ValueOf(tc.into).Elem())
		}
	}
	// Nil still decodes into types that can be nil.
	var p *int64
	if err := (MsgpackCodec{}).Unmarshal([]byte{0xc0}, &p); err != nil || p != nil {
		t.Errorf("msgpack nil into *int64 = %v, %v; want nil, nil", p, err)
	}
	var a any = 1
	if err := (JSONCodec{}).Unmarshal([]byte("null"), &a); err != nil || a != nil {
		t.Errorf("json null into any = %v, %v; want nil, nil", a, err)
	}
}

// TestDecodeValueError checks that decode and encode failures name the
// object and the codec and match ErrCodec.
func TestDecodeValueError(t *testing.T) {
	_, err := decodeValue[int64](MsgpackCodec{}, `bucket "b1"`, []byte{0xa1, 'x'})
	if !errors.Is(err, ErrCodec) {
		t.Fatalf("decodeValue error = %v; want ErrCodec", err)
	}
	for _, s := range []string{`bucket "b1"`, "msgpack", "decode"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	_, err = encodeValue(StringCodec{}, `map "m1"`, struct{}{})
	if !errors.Is(err, ErrCodec) || !strings.Contains(err.Error(), `map "m1"`) || !strings.Contains(err.Error(), "string") {
		t.Errorf("encodeValue(struct) error = %v; want ErrCodec naming map \"m1\" and string", err)
	}
	_, err = encodeValue(MsgpackCodec{}, "x", make(chan int))
	if !errors.Is(err, ErrCodec) {
		t.Errorf("msgpack encode chan error = %v; want ErrCodec", err)
	}
	if _, err := encodeNonNil(MsgpackCodec{}, "x", (*int)(nil)); !errors.Is(err, ErrNilValue) {
		t.Errorf("encodeNonNil(nil pointer) = %v; want ErrNilValue", err)
	}
	if _, err := encodeNonNil(MsgpackCodec{}, "x", nil); !errors.Is(err, ErrNilValue) {
		t.Errorf("encodeNonNil(nil) = %v; want ErrNilValue", err)
	}
	if b, err := encodeNonNil(MsgpackCodec{}, "x", []int(nil)); err != nil || !bytes.Equal(b, []byte{0xc0}) {
		t.Errorf("encodeNonNil(nil slice) = %x, %v; want c0, nil", b, err)
	}
}

// TestMsgpackCodecLeavesPoolClean checks that the compact-integer flag set
// on a pooled encoder does not leak into other users of the msgpack pool.
func TestMsgpackCodecLeavesPoolClean(t *testing.T) {
	for range 10 {
		if _, err := (MsgpackCodec{}).Marshal(int64(1)); err != nil {
			t.Fatal(err)
		}
		b, err := msgpack.Marshal(int64(1))
		if err != nil {
			t.Fatal(err)
		}
		if want := []byte{0xd3, 0, 0, 0, 0, 0, 0, 0, 1}; !bytes.Equal(b, want) {
			t.Fatalf("msgpack.Marshal(int64(1)) after MsgpackCodec.Marshal = %x, want %x", b, want)
		}
	}
}

// TestObjectCodec checks how WithCodec options resolve.
func TestObjectCodec(t *testing.T) {
	c := newClient(t, sharedRedis(t), &Options{Codec: JSONCodec{}})
	for _, tc := range []struct {
		name string
		opts []ObjectOption
		want string
	}{
		{"none", nil, "json"},
		{"nil option", []ObjectOption{nil}, "json"},
		{"nil codec", []ObjectOption{WithCodec(nil)}, "json"},
		{"string", []ObjectOption{WithCodec(StringCodec{})}, "string"},
		{"last wins", []ObjectOption{WithCodec(StringCodec{}), WithCodec(BytesCodec{})}, "bytes"},
	} {
		if got := c.objectCodec(tc.opts).Name(); got != tc.want {
			t.Errorf("%s: codec %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := newClient(t, sharedRedis(t), nil).objectCodec(nil).Name(); got != "msgpack" {
		t.Errorf("default codec %q, want msgpack", got)
	}
}

// TestStringCodecNilTextMarshalerIsError checks that StringCodec given a
// nil pointer whose type has a value-receiver MarshalText (*time.Time)
// returns an error, not panic; BloomFilter.Add reaches it without a nil check.
func TestStringCodecNilTextMarshalerIsError(t *testing.T) {
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

// TestWithCodecTypedNilKeepsDefault checks that WithCodec of a typed nil pointer ((*JSONCodec)
// (nil)) keeps the default codec like WithCodec(nil), instead of panicking
// on the first call (the built-in codecs have value receivers).
func TestWithCodecTypedNilKeepsDefault(t *testing.T) {
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
func TestOptionsCodecTypedNilFallsBackToDefault(t *testing.T) {
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
