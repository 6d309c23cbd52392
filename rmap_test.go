package redisson

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestMapOperations walks every Map call on names spread over the cluster,
// with each codec that encodes strings and integers.
func TestMapOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		codecs := []Codec{MsgpackCodec{}, JSONCodec{}, StringCodec{}}
		for i, name := range spreadNames(t, rdb, 6) {
			codec := codecs[i%len(codecs)]
			m := GetMap[string, int64](c, name, WithCodec(codec))
			check := func(op string, v int64, ok bool, err error, wantV int64, wantOK bool) {
				t.Helper()
				if err != nil || v != wantV || ok != wantOK {
					t.Fatalf("%s %s = %d, %v, %v; want %d, %v, nil", codec.Name(), op, v, ok, err, wantV, wantOK)
				}
			}
			v, ok, err := m.Get(ctx, "a")
			check("Get(a) on missing", v, ok, err, 0, false)
			v, ok, err = m.Put(ctx, "a", 1)
			check("Put(a, 1)", v, ok, err, 0, false)
			v, ok, err = m.Put(ctx, "a", 2)
			check("Put(a, 2)", v, ok, err, 1, true)
			v, ok, err = m.PutIfAbsent(ctx, "a", 3)
			check("PutIfAbsent(a, 3)", v, ok, err, 2, true)
			v, ok, err = m.PutIfAbsent(ctx, "b", 4)
			check("PutIfAbsent(b, 4)", v, ok, err, 0, false)
			v, ok, err = m.Get(ctx, "b")
			check("Get(b)", v, ok, err, 4, true)
			if isNew, err := m.FastPut(ctx, "c", -5); err != nil || !isNew {
				t.Fatalf("FastPut(c) new = %v, %v", isNew, err)
			}
			if isNew, err := m.FastPut(ctx, "c", 6); err != nil || isNew {
				t.Fatalf("FastPut(c) again = %v, %v", isNew, err)
			}
			if has, err := m.ContainsKey(ctx, "c"); err != nil || !has {
				t.Fatalf("ContainsKey(c) = %v, %v", has, err)
			}
			if has, err := m.ContainsKey(ctx, "z"); err != nil || has {
				t.Fatalf("ContainsKey(z) = %v, %v", has, err)
			}
			if n, err := m.Size(ctx); err != nil || n != 3 {
				t.Fatalf("Size = %d, %v; want 3", n, err)
			}
			all, err := m.ReadAll(ctx)
			if want := map[string]int64{"a": 2, "b": 4, "c": 6}; err != nil || !maps.Equal(all, want) {
				t.Fatalf("ReadAll = %v, %v; want %v", all, err, want)
			}
			v, ok, err = m.Remove(ctx, "a")
			check("Remove(a)", v, ok, err, 2, true)
			v, ok, err = m.Remove(ctx, "a")
			check("Remove(a) again", v, ok, err, 0, false)
			if n, err := m.FastRemove(ctx); err != nil || n != 0 {
				t.Fatalf("FastRemove() = %d, %v", n, err)
			}
			if n, err := m.FastRemove(ctx, "b", "c", "z"); err != nil || n != 2 {
				t.Fatalf("FastRemove(b, c, z) = %d, %v; want 2", n, err)
			}
			if n, err := m.Size(ctx); err != nil || n != 0 {
				t.Fatalf("Size after removing all = %d, %v", n, err)
			}
			m.AddAndGet(ctx, "d", 3)
			if n, err := m.AddAndGet(ctx, "d", 4); err != nil || n != 7 {
				t.Fatalf("AddAndGet(d, 3), (d, 4) = %d, %v; want 7", n, err)
			}
			if ok, err := m.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
		}
	})
}

// TestMapIterator iterates a map larger than one batch: every entry once
// (the hash is not rehashed meanwhile), in several HSCAN round trips, with
// early stop, bad batch, undecodable entries and a cancelled context.
func TestMapIterator(t *testing.T) {
	rdb := sharedRedis(t)
	h := newBenchHook(rdb)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	m := GetMap[int64, string](c, uniqueName(t, rdb))
	want := map[int64]string{}
	pipe := rdb.Pipeline()
	for i := range int64(1000) {
		want[i] = "v" + strconv.FormatInt(i, 10)
		k, _ := MsgpackCodec{}.Marshal(i)
		v, _ := MsgpackCodec{}.Marshal(want[i])
		pipe.HSet(ctx, m.Name(), k, v)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	it := m.Iterator(50)
	got := map[int64]string{}
	cmds0 := h.cmds.Load()
	for k, v := range it.All(ctx) {
		if _, dup := got[k]; dup {
			t.Errorf("key %d yielded twice", k)
		}
		got[k] = v
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("iterated %d entries, want %d (equal maps: false)", len(got), len(want))
	}
	if scans := h.cmds.Load() - cmds0; scans < 5 {
		t.Errorf("1000 entries in batches of 50 took %d HSCANs; want several", scans)
	}

	n := 0
	for range it.All(ctx) {
		if n++; n == 5 {
			break
		}
	}
	if n != 5 || it.Err() != nil {
		t.Errorf("break after 5: n = %d, Err = %v", n, it.Err())
	}

	for _, batch := range []int{0, -1} {
		bad := m.Iterator(batch)
		for range bad.All(ctx) {
			t.Fatal("yielded with a bad batch")
		}
		if !errors.Is(bad.Err(), ErrInvalidBatch) {
			t.Errorf("Iterator(%d).Err = %v; want ErrInvalidBatch", batch, bad.Err())
		}
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for range it.All(cctx) {
		t.Fatal("yielded with a cancelled context")
	}
	if !errors.Is(it.Err(), context.Canceled) {
		t.Errorf("Err with a cancelled context = %v; want context.Canceled", it.Err())
	}

	rdb.HSet(ctx, m.Name(), "not msgpack", "x")
	for range it.All(ctx) {
	}
	if !errors.Is(it.Err(), ErrCodec) {
		t.Errorf("Err with an undecodable field = %v; want ErrCodec", it.Err())
	}
	if _, err := m.ReadAll(ctx); !errors.Is(err, ErrCodec) {
		t.Errorf("ReadAll with an undecodable field = %v; want ErrCodec", err)
	}
}

// TestMapAddAndGet adds with each codec that can, checks the stored bytes,
// and checks the refusals leave the map unchanged.
func TestMapAddAndGet(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for _, codec := range []Codec{MsgpackCodec{}, StringCodec{}, JSONCodec{}} {
		mi := GetMap[string, int64](c, uniqueName(t, rdb), WithCodec(codec))
		for _, s := range []struct{ delta, want int64 }{{5, 5}, {-7, -2}, {300, 298}} {
			if got, err := mi.AddAndGet(ctx, "n", s.delta); err != nil || got != s.want {
				t.Fatalf("%s AddAndGet(%d) = %d, %v; want %d", codec.Name(), s.delta, got, err, s.want)
			}
		}
		raw := rdb.HGet(ctx, mi.Name(), string(mustEncode(t, codec, "n"))).Val()
		if want := string(mustEncode(t, codec, int64(298))); raw != want {
			t.Errorf("%s stored %x after AddAndGet, want %x (what the codec writes for 298)", codec.Name(), raw, want)
		}
		mf := GetMap[string, float64](c, uniqueName(t, rdb), WithCodec(codec))
		for _, s := range []struct{ delta, want float64 }{{1.5, 1.5}, {2.25, 3.75}, {0.25, 4}} {
			if got, err := mf.AddAndGet(ctx, "f", s.delta); err != nil || got != s.want {
				t.Fatalf("%s AddAndGet(%v) = %v, %v; want %v", codec.Name(), s.delta, got, err, s.want)
			}
		}
		if v, ok, err := mf.Get(ctx, "f"); err != nil || !ok || v != 4 {
			t.Errorf("%s Get after float adds = %v, %v, %v; want 4", codec.Name(), v, ok, err)
		}
		if codec.Name() == "msgpack" {
			raw := rdb.HGet(ctx, mf.Name(), string(mustEncode(t, codec, "f"))).Val()
			if want := string(mustEncode(t, codec, 4.0)); raw != want {
				t.Errorf("msgpack float64 sum stored as %x, want %x (a Double, as Jackson writes it)", raw, want)
			}
			m32 := GetMap[string, float32](c, uniqueName(t, rdb))
			m32.AddAndGet(ctx, "f", 1.25)
			if got, err := m32.AddAndGet(ctx, "f", 1.25); err != nil || got != 2.5 {
				t.Errorf("float32 AddAndGet = %v, %v; want 2.5", got, err)
			}
			raw = rdb.HGet(ctx, m32.Name(), string(mustEncode(t, codec, "f"))).Val()
			if want := string(mustEncode(t, codec, float32(2.5))); raw != want {
				t.Errorf("msgpack float32 sum stored as %x, want %x (a Float)", raw, want)
			}
		}
	}

	// Values written by Redisson (codecs.json, encode_map_put v_long42 and
	// v_int42): a Long is wrapped with its type id, an Integer is bare. The
	// sum is written as the codec writes V: int64 as a Long, int32 bare.
	name := uniqueName(t, rdb)
	for _, tc := range []struct {
		codec       Codec
		field, java string // hex
		add         func() (int64, error)
		want        string // hex
	}{
		{MsgpackCodec{}, "a56c6f6e6767", "92ae6a6176612e6c616e672e4c6f6e672a",
			func() (int64, error) { return GetMap[string, int64](c, name).AddAndGet(ctx, "longg", 1) },
			"92ae6a6176612e6c616e672e4c6f6e672b"},
		{MsgpackCodec{}, "a5696e746767", "2a",
			func() (int64, error) {
				n, err := GetMap[string, int32](c, name).AddAndGet(ctx, "intgg", 1)
				return int64(n), err
			},
			"2b"},
		{JSONCodec{}, "226c6f6e676722", "5b226a6176612e6c616e672e4c6f6e67222c34325d",
			func() (int64, error) {
				return GetMap[string, int64](c, name, WithCodec(JSONCodec{})).AddAndGet(ctx, "longg", 1)
			},
			"5b226a6176612e6c616e672e4c6f6e67222c34335d"},
		{JSONCodec{}, "22696e74676722", "3432",
			func() (int64, error) {
				n, err := GetMap[string, int32](c, name, WithCodec(JSONCodec{})).AddAndGet(ctx, "intgg", 1)
				return int64(n), err
			},
			"3433"},
	} {
		rdb.HSet(ctx, name, mustHex(t, tc.field), mustHex(t, tc.java))
		if got, err := tc.add(); err != nil || got != 43 {
			t.Errorf("%s AddAndGet on Redisson's %s = %d, %v; want 43", tc.codec.Name(), tc.java, got, err)
		}
		if raw := rdb.HGet(ctx, name, string(mustHex(t, tc.field))).Val(); raw != string(mustHex(t, tc.want)) {
			t.Errorf("%s stored %x after adding 1 to Redisson's %s, want %s", tc.codec.Name(), raw, tc.java, tc.want)
		}
	}

	// JSON sums use Redis's int64 arithmetic: exact beyond 2^53, overflow refused.
	jm := GetMap[string, int64](c, uniqueName(t, rdb), WithCodec(JSONCodec{}))
	if got, err := jm.AddAndGet(ctx, "k", math.MaxInt64-1); err != nil || got != math.MaxInt64-1 {
		t.Errorf("JSON AddAndGet(MaxInt64-1) = %d, %v", got, err)
	}
	if got, err := jm.AddAndGet(ctx, "k", 1); err != nil || got != math.MaxInt64 {
		t.Errorf("JSON AddAndGet(+1) = %d, %v; want MaxInt64", got, err)
	}
	if got, err := jm.AddAndGet(ctx, "k", 1); !errors.Is(err, ErrCodec) {
		t.Errorf("JSON AddAndGet past MaxInt64 = %d, %v; want ErrCodec", got, err)
	}
	if v, _, err := jm.Get(ctx, "k"); err != nil || v != math.MaxInt64 {
		t.Errorf("after the refused overflow Get = %d, %v; want MaxInt64 unchanged", v, err)
	}

	// Refusals: ErrCodec, map unchanged.
	name = uniqueName(t, rdb)
	rdb.HSet(ctx, name, mustEncode(t, MsgpackCodec{}, "big"), mustEncode(t, MsgpackCodec{}, int64(1)<<53))
	rdb.HSet(ctx, name, mustEncode(t, MsgpackCodec{}, "text"), mustEncode(t, MsgpackCodec{}, "hello"))
	rdb.HSet(ctx, name, mustEncode(t, MsgpackCodec{}, "frac"), mustEncode(t, MsgpackCodec{}, 2.5))
	rdb.HSet(ctx, name, "frac-text", "2.5")
	rdb.HSet(ctx, name, "word", "abc")
	before := keyState(t, rdb, name)
	for _, tc := range []struct {
		op  string
		err error
	}{
		{"msgpack beyond 2^53", second(GetMap[string, int64](c, name).AddAndGet(ctx, "big", 1))},
		{"msgpack sum beyond 2^53", second(GetMap[string, int64](c, name).AddAndGet(ctx, "new", 1<<53))},
		{"msgpack text", second(GetMap[string, int64](c, name).AddAndGet(ctx, "text", 1))},
		{"msgpack float as int", second(GetMap[string, int64](c, name).AddAndGet(ctx, "frac", 1))},
		{"string codec float as int", second(GetMap[string, int64](c, name, WithCodec(StringCodec{})).AddAndGet(ctx, "frac-text", 1))},
		{"string codec word as float", second(GetMap[string, float64](c, name, WithCodec(StringCodec{})).AddAndGet(ctx, "word", 1))},
		{"NaN delta", second(GetMap[string, float64](c, name).AddAndGet(ctx, "new", math.NaN()))},
		{"bytes codec", second(GetMap[string, float64](c, name, WithCodec(BytesCodec{})).AddAndGet(ctx, "new", 1))},
		{"string value type", second(GetMap[string, string](c, name).AddAndGet(ctx, "new", "1"))},
		{"uint value type", second(GetMap[string, uint](c, name).AddAndGet(ctx, "new", 1))},
	} {
		if !errors.Is(tc.err, ErrCodec) {
			t.Errorf("%s: AddAndGet = %v; want ErrCodec", tc.op, tc.err)
		}
		if after := keyState(t, rdb, name); after != before {
			t.Fatalf("%s changed Redis: %s -> %s", tc.op, before, after)
		}
	}
}

func mustEncode(t *testing.T, c Codec, v any) []byte {
	t.Helper()
	b, err := c.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMapBadInput: empty name, closed client, a key of another type, nil
// pointers and undecodable values give their errors and leave Redis
// unchanged.
func TestMapBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	closed := newClient(t, rdb, nil)
	closed.Close()
	for _, tc := range []struct {
		what string
		m    *Map[string, int64]
		want error
	}{
		{"empty name", GetMap[string, int64](c, ""), ErrEmptyName},
		{"closed client", GetMap[string, int64](closed, uniqueName(t, rdb)), ErrClientClosed},
	} {
		for _, nc := range mapCalls(ctx, tc.m, "k", 1) {
			if err := nc.call(); !errors.Is(err, tc.want) {
				t.Errorf("%s: %s = %v; want %v", tc.what, nc.op, err, tc.want)
			}
		}
	}

	name := uniqueName(t, rdb)
	rdb.Set(ctx, name, "a string", 0)
	before := keyState(t, rdb, name)
	for _, nc := range mapCalls(ctx, GetMap[string, int64](c, name), "k", 1) {
		if nc.op == "Delete" {
			continue
		}
		if err := nc.call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("string at key: %s = %v; want ErrWrongType", nc.op, err)
		}
		if after := keyState(t, rdb, name); after != before {
			t.Fatalf("string at key: %s changed Redis: %s -> %s", nc.op, before, after)
		}
	}

	pm := GetMap[*string, *int64](c, uniqueName(t, rdb))
	k, one := "k", int64(1)
	if _, err := pm.FastPut(ctx, &k, &one); err != nil {
		t.Fatal(err)
	}
	before = keyState(t, rdb, pm.Name())
	for _, tc := range []struct {
		op  string
		err error
	}{
		{"Put(nil, v)", third(pm.Put(ctx, nil, &one))},
		{"Put(k, nil)", third(pm.Put(ctx, &k, nil))},
		{"PutIfAbsent(k, nil)", third(pm.PutIfAbsent(ctx, &k, nil))},
		{"FastPut(k, nil)", second(pm.FastPut(ctx, &k, nil))},
		{"FastRemove(k, nil)", second(pm.FastRemove(ctx, &k, nil))},
		{"Remove(nil)", third(pm.Remove(ctx, nil))},
		{"Get(nil)", third(pm.Get(ctx, nil))},
		{"ContainsKey(nil)", second(pm.ContainsKey(ctx, nil))},
		{"AddAndGet(nil, v)", second(pm.AddAndGet(ctx, nil, &one))},
	} {
		if !errors.Is(tc.err, ErrNilValue) {
			t.Errorf("%s = %v; want ErrNilValue", tc.op, tc.err)
		}
		if after := keyState(t, rdb, pm.Name()); after != before {
			t.Fatalf("%s changed Redis: %s -> %s", tc.op, before, after)
		}
	}

	name = uniqueName(t, rdb)
	rdb.HSet(ctx, name, mustEncode(t, MsgpackCodec{}, "k"), "not msgpack")
	before = keyState(t, rdb, name)
	_, _, err := GetMap[string, int64](c, name).Get(ctx, "k")
	if !errors.Is(err, ErrCodec) || !strings.Contains(err.Error(), fmt.Sprintf("map %q", name)) || !strings.Contains(err.Error(), "msgpack") {
		t.Errorf("Get of an undecodable value = %v; want ErrCodec naming the map and msgpack", err)
	}
	if after := keyState(t, rdb, name); after != before {
		t.Fatalf("Get changed Redis: %s -> %s", before, after)
	}
}

func mapCalls(ctx context.Context, m *Map[string, int64], k string, v int64) []namedCall {
	return []namedCall{
		{"Get", func() error { return third(m.Get(ctx, k)) }},
		{"Put", func() error { return third(m.Put(ctx, k, v)) }},
		{"PutIfAbsent", func() error { return third(m.PutIfAbsent(ctx, k, v)) }},
		{"Remove", func() error { return third(m.Remove(ctx, k)) }},
		{"FastPut", func() error { return second(m.FastPut(ctx, k, v)) }},
		{"FastRemove", func() error { return second(m.FastRemove(ctx, k)) }},
		{"ContainsKey", func() error { return second(m.ContainsKey(ctx, k)) }},
		{"Size", func() error { return second(m.Size(ctx)) }},
		{"ReadAll", func() error { return second(m.ReadAll(ctx)) }},
		{"AddAndGet", func() error { return second(m.AddAndGet(ctx, k, v)) }},
		{"Iterator", func() error {
			it := m.Iterator(10)
			for range it.All(ctx) {
			}
			return it.Err()
		}},
		{"Delete", func() error { return second(m.Delete(ctx)) }},
	}
}

// TestMapRedissonBytes reads a hash laid out as Redisson writes it (fields
// and values from the testdata fixtures) and checks that FastPut writes the
// same field and value bytes.
func TestMapRedissonBytes(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for _, tc := range []struct {
		file  string
		codec Codec
	}{{"msgpack.txt", MsgpackCodec{}}, {"string.txt", StringCodec{}}, {"json.txt", JSONCodec{}}} {
		// Each fixture as a value under the key "k", and as a key with value "v".
		for _, fx := range loadFixtures(t, tc.file) {
			switch want := fx.value(t).(type) {
			case string:
				mapInterop(t, ctx, rdb, c, tc.codec, fx, want)
			case int64:
				mapInterop(t, ctx, rdb, c, tc.codec, fx, want)
			case float64:
				mapInterop(t, ctx, rdb, c, tc.codec, fx, want)
			case bool:
				mapInterop(t, ctx, rdb, c, tc.codec, fx, want)
			}
		}
	}
}

func mapInterop[T comparable](t *testing.T, ctx context.Context, rdb redis.UniversalClient, c *Client, codec Codec, fx fixture, want T) {
	t.Helper()
	k := mustEncode(t, codec, "k")
	v := mustEncode(t, codec, "v")

	asValue := GetMap[string, T](c, uniqueName(t, rdb), WithCodec(codec))
	rdb.HSet(ctx, asValue.Name(), k, fx.data)
	if got, ok, err := asValue.Get(ctx, "k"); err != nil || !ok || got != want {
		t.Errorf("%s: as a value: Get = %#v, %v, %v; want %#v", fx.where, got, ok, err, want)
	}
	asValue.FastPut(ctx, "k", want)
	if raw := rdb.HGet(ctx, asValue.Name(), string(k)).Val(); raw != string(fx.goData) {
		t.Errorf("%s: as a value: FastPut stored %x, want %x", fx.where, raw, fx.goData)
	}

	asKey := GetMap[T, string](c, uniqueName(t, rdb), WithCodec(codec))
	rdb.HSet(ctx, asKey.Name(), fx.data, v)
	all, err := asKey.ReadAll(ctx)
	if err != nil || len(all) != 1 || all[want] != "v" {
		t.Errorf("%s: as a key: ReadAll = %v, %v; want map[%v:v]", fx.where, all, err, want)
	}
	if string(fx.goData) == string(fx.data) {
		if got, ok, err := asKey.Get(ctx, want); err != nil || !ok || got != "v" {
			t.Errorf("%s: as a key: Get(%#v) = %q, %v, %v; want v (the field Java wrote)", fx.where, want, got, ok, err)
		}
	}
}

// TestMapReadAllUnhashableKeyIsCodecError checks that a Map[any, V] whose hash holds a field
// that decodes to a slice or a map (a Java List key, or a Go slice put as
// key) does not panic in ReadAll; it is a codec error.
func TestMapReadAllUnhashableKeyIsCodecError(t *testing.T) {
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

// TestMapAddAndGetOtherNumericKindIsCodecError checks that, with MsgpackCodec, a stored Java Double
// (float 64) is not an integer of V=int64's kind, nor a stored Long one of
// V=float64's: the doc promises ErrCodec and an unchanged map, not a value
// silently rewritten in the other type (which Java then reads as an Integer
// where it wrote a Double).
func TestMapAddAndGetOtherNumericKindIsCodecError(t *testing.T) {
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

// TestMapFloatZeroKeysSizeMatchesReadAll checks that, although 0.0 and
// -0.0 are one key in Go (==) but two fields in Redis, ReadAll returns as
// many entries as Size counts (it does not silently drop one).
func TestMapFloatZeroKeysSizeMatchesReadAll(t *testing.T) {
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
