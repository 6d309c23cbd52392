package redisson

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestQueueOfferPollPeekLayout checks Queue against the recording of
// Redisson's RQueue: offer is RPUSH of the msgpack bytes, peek reads the
// head, poll takes it, an empty queue answers false.
func TestQueueOfferPollPeekLayout(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	q := GetQueue[string](c, name)
	for _, v := range []string{"a", "b"} {
		if err := q.Offer(ctx, v); err != nil {
			t.Fatalf("Offer %s: %v", v, err)
		}
	}
	if got := rdb.LRange(ctx, name, 0, -1).Val(); !slices.Equal(got, []string{"\xa1a", "\xa1b"}) {
		t.Fatalf("list = %q, want Redisson's [\\xa1a \\xa1b]", got)
	}
	if v, ok, err := q.Peek(ctx); err != nil || !ok || v != "a" {
		t.Fatalf("Peek = %q, %v, %v; want a, true", v, ok, err)
	}
	if n, err := q.Size(ctx); err != nil || n != 2 {
		t.Fatalf("Size = %d, %v; want 2", n, err)
	}
	if all, err := q.ReadAll(ctx); err != nil || !slices.Equal(all, []string{"a", "b"}) {
		t.Fatalf("ReadAll = %v, %v; want [a b]", all, err)
	}
	for _, want := range []string{"a", "b"} {
		if v, ok, err := q.Poll(ctx); err != nil || !ok || v != want {
			t.Fatalf("Poll = %q, %v, %v; want %s, true", v, ok, err, want)
		}
	}
	if v, ok, err := q.Poll(ctx); err != nil || ok {
		t.Fatalf("Poll on empty = %q, %v, %v; want false", v, ok, err)
	}
	if _, ok, err := q.Peek(ctx); err != nil || ok {
		t.Fatalf("Peek on empty = %v, %v; want false", ok, err)
	}
	if existed, err := q.Delete(ctx); err != nil || existed {
		t.Fatalf("Delete of the empty queue = %v, %v; want false", existed, err)
	}
}

// TestDequeBothEnds checks Deque's calls at both ends against the recording
// of RDeque (offerFirst(1L) is LPUSH of a wrapped java.lang.Long).
func TestDequeBothEnds(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	d := GetDeque[any](c, name)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("OfferFirst f", d.OfferFirst(ctx, "f"))
	must("OfferLast l", d.OfferLast(ctx, "l"))
	must("OfferFirst 1", d.OfferFirst(ctx, int64(1)))
	want := []string{"\x92\xaejava.lang.Long\x01", "\xa1f", "\xa1l"}
	if got := rdb.LRange(ctx, name, 0, -1).Val(); !slices.Equal(got, want) {
		t.Fatalf("list = %q, want %q", got, want)
	}
	if v, ok, err := d.PeekFirst(ctx); err != nil || !ok || v != int64(1) {
		t.Fatalf("PeekFirst = %v, %v, %v; want 1", v, ok, err)
	}
	if v, ok, err := d.PeekLast(ctx); err != nil || !ok || v != "l" {
		t.Fatalf("PeekLast = %v, %v, %v; want l", v, ok, err)
	}
	if v, ok, err := d.PollLast(ctx); err != nil || !ok || v != "l" {
		t.Fatalf("PollLast = %v, %v, %v; want l", v, ok, err)
	}
	if v, ok, err := d.PollFirst(ctx); err != nil || !ok || v != int64(1) {
		t.Fatalf("PollFirst = %v, %v, %v; want 1", v, ok, err)
	}
	if v, ok, err := d.PollFirst(ctx); err != nil || !ok || v != "f" {
		t.Fatalf("PollFirst = %v, %v, %v; want f", v, ok, err)
	}
	if _, ok, err := d.PeekLast(ctx); err != nil || ok {
		t.Fatalf("PeekLast on empty = %v, %v; want false", ok, err)
	}
	if _, ok, err := d.PollLast(ctx); err != nil || ok {
		t.Fatalf("PollLast on empty = %v, %v; want false", ok, err)
	}
}

// TestQueueIteratorPages checks that the iterator yields every element in
// order across pages, stops when asked, and refuses a batch below 1.
func TestQueueIteratorPages(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	q := GetQueue[int](c, name)
	var want []int
	for i := range 23 {
		if err := q.Offer(ctx, i); err != nil {
			t.Fatal(err)
		}
		want = append(want, i)
	}
	for _, batch := range []int{1, 5, 23, 100} {
		it := q.Iterator(batch)
		got := slices.Collect(it.All(ctx))
		if it.Err() != nil || !slices.Equal(got, want) {
			t.Errorf("batch %d: got %v, %v; want %v", batch, got, it.Err(), want)
		}
	}
	it := q.Iterator(5)
	var first []int
	for v := range it.All(ctx) {
		if first = append(first, v); len(first) == 7 {
			break
		}
	}
	if !slices.Equal(first, want[:7]) || it.Err() != nil {
		t.Errorf("stopped iteration: got %v, %v; want %v", first, it.Err(), want[:7])
	}
	it = q.Iterator(0)
	for range it.All(ctx) {
		t.Fatal("batch 0 yielded")
	}
	if !errors.Is(it.Err(), ErrInvalidBatch) {
		t.Errorf("batch 0: got %v, want ErrInvalidBatch", it.Err())
	}
	if n := rdb.LLen(ctx, name).Val(); n != 23 {
		t.Errorf("the iterator changed the queue: %d elements, want 23", n)
	}
}

// TestQueueBadInput checks the documented sentinels of bad input, each
// leaving Redis unchanged.
func TestQueueBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	rdb.RPush(ctx, name, "\xa1x")
	ptr := GetDeque[*string](c, name)
	undecodable := GetQueue[int](c, name)
	empty := GetDeque[string](c, "")
	for _, tc := range []struct {
		what string
		call func() error
		want error
	}{
		{"Offer nil", func() error { return ptr.Offer(ctx, nil) }, ErrNilValue},
		{"OfferFirst nil", func() error { return ptr.OfferFirst(ctx, nil) }, ErrNilValue},
		{"Peek undecodable", func() error { _, _, err := undecodable.Peek(ctx); return err }, ErrCodec},
		{"ReadAll undecodable", func() error { _, err := undecodable.ReadAll(ctx); return err }, ErrCodec},
		{"empty name Offer", func() error { return empty.Offer(ctx, "v") }, ErrEmptyName},
		{"empty name PollLast", func() error { _, _, err := empty.PollLast(ctx); return err }, ErrEmptyName},
		{"empty name PeekLast", func() error { _, _, err := empty.PeekLast(ctx); return err }, ErrEmptyName},
		{"empty name Size", func() error { _, err := empty.Size(ctx); return err }, ErrEmptyName},
		{"empty name Delete", func() error { _, err := empty.Delete(ctx); return err }, ErrEmptyName},
	} {
		before := nameState(t, rdb, name)
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.what, err, tc.want)
		}
		if after := nameState(t, rdb, name); after != before {
			t.Errorf("%s: Redis changed:\n got %s\nwant %s", tc.what, after, before)
		}
	}
	// Poll of an element that does not decode removes it and says so.
	if _, _, err := undecodable.Poll(ctx); !errors.Is(err, ErrCodec) {
		t.Errorf("Poll undecodable: got %v, want ErrCodec", err)
	}
}

// TestQueueWrongType checks every Deque call on a key holding a hash:
// ErrWrongType, the hash unchanged.
func TestQueueWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	rdb.HSet(ctx, name, "f", "v")
	d := GetDeque[string](c, name)
	calls := map[string]func() error{
		"Offer":      func() error { return d.Offer(ctx, "v") },
		"OfferFirst": func() error { return d.OfferFirst(ctx, "v") },
		"Poll":       func() error { _, _, err := d.Poll(ctx); return err },
		"PollLast":   func() error { _, _, err := d.PollLast(ctx); return err },
		"Peek":       func() error { _, _, err := d.Peek(ctx); return err },
		"PeekLast":   func() error { _, _, err := d.PeekLast(ctx); return err },
		"Size":       func() error { _, err := d.Size(ctx); return err },
		"ReadAll":    func() error { _, err := d.ReadAll(ctx); return err },
		"Iterator": func() error {
			it := d.Iterator(10)
			for range it.All(ctx) {
			}
			return it.Err()
		},
	}
	before := nameState(t, rdb, name)
	for what, call := range calls {
		if err := call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("%s on a hash: got %v, want ErrWrongType", what, err)
		}
	}
	if after := nameState(t, rdb, name); after != before {
		t.Errorf("Redis changed:\n got %s\nwant %s", after, before)
	}
}

// TestQueueInteropWithRedisson checks that a Go queue and a Redisson-style
// client (the recorded commands) share one list both ways.
func TestQueueInteropWithRedisson(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	j := newForeignQueue(rdb, name)
	q := GetQueue[string](c, name)
	for i := range 3 {
		if err := j.offer(ctx, fmt.Sprint("java", i)); err != nil {
			t.Fatal(err)
		}
		if err := q.Offer(ctx, fmt.Sprint("go", i)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for i := range 6 {
		var v string
		var ok bool
		var err error
		if i%2 == 0 {
			v, ok, err = q.Poll(ctx)
		} else {
			v, ok, err = j.poll(ctx)
		}
		if err != nil || !ok {
			t.Fatalf("poll %d: %v, %v", i, ok, err)
		}
		got = append(got, v)
	}
	want := []string{"java0", "go0", "java1", "go1", "java2", "go2"}
	if !slices.Equal(got, want) {
		t.Fatalf("polled %v, want %v", got, want)
	}
}

// foreignQueue is a stand-in for Java Redisson's RQueue / RBlockingQueue
// with MsgPackJacksonCodec and String elements, issuing exactly the
// recorded commands (RQueue_RDeque.md, RBlockingQueue.md).
type foreignQueue struct {
	rdb  redis.UniversalClient
	name string
}

func newForeignQueue(rdb redis.UniversalClient, name string) *foreignQueue {
	return &foreignQueue{rdb: rdb, name: name}
}

func (f *foreignQueue) offer(ctx context.Context, v string) error {
	b, err := MsgpackCodec{}.Marshal(v)
	if err != nil {
		return err
	}
	return f.rdb.RPush(ctx, f.name, b).Err()
}

func (f *foreignQueue) poll(ctx context.Context) (string, bool, error) {
	s, err := f.rdb.LPop(ctx, f.name).Result()
	return decodeForeign(s, err)
}

// take is Redisson's take: BLPOP name 0 (here with a bound, in seconds).
func (f *foreignQueue) take(ctx context.Context, seconds int) (string, bool, error) {
	kv, err := f.rdb.BLPop(ctx, time.Duration(seconds)*time.Second, f.name).Result()
	if err != nil || len(kv) != 2 {
		return decodeForeign("", err)
	}
	return decodeForeign(kv[1], nil)
}

// decodeForeign decodes a reply as Redisson's MsgPackJacksonCodec reads a
// String; a nil reply is (zero, false).
func decodeForeign(s string, err error) (string, bool, error) {
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var v string
	if err := (MsgpackCodec{}).Unmarshal([]byte(s), &v); err != nil {
		return "", false, err
	}
	return v, true, nil
}
