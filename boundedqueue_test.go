package redisson

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestBoundedQueueCapacityLayout checks the bounded queue against the
// recording of RBoundedBlockingQueue: trySetCapacity sets and publishes
// redisson_bqs:{name}, offer takes capacity and is false when full, poll
// and take give it back and publish the new value.
func TestBoundedQueueCapacityLayout(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	capKey := "redisson_bqs:{" + name + "}"
	channel := "redisson_sc:redisson_bqs:{" + name + "}"
	t.Cleanup(func() { rdb.Del(context.Background(), capKey) })
	sub := rdb.Subscribe(ctx, channel)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	q := GetBoundedBlockingQueue[string](c, name)
	if _, err := q.Offer(ctx, "a"); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("Offer before TrySetCapacity: got %v, want ErrNotInitialized", err)
	}
	if _, err := q.TrySetCapacity(ctx, 0); !errors.Is(err, ErrInvalidCapacity) {
		t.Fatalf("TrySetCapacity(0): got %v, want ErrInvalidCapacity", err)
	}
	if ok, err := q.TrySetCapacity(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetCapacity(2) = %v, %v; want true", ok, err)
	}
	if ok, err := q.TrySetCapacity(ctx, 5); err != nil || ok {
		t.Fatalf("second TrySetCapacity = %v, %v; want false", ok, err)
	}
	expectMessage(t, sub, "2")
	for _, v := range []string{"a", "b"} {
		if ok, err := q.Offer(ctx, v); err != nil || !ok {
			t.Fatalf("Offer %s = %v, %v; want true", v, ok, err)
		}
	}
	if ok, err := q.Offer(ctx, "c"); err != nil || ok {
		t.Fatalf("Offer on a full queue = %v, %v; want false", ok, err)
	}
	if got := rdb.LRange(ctx, name, 0, -1).Val(); !slices.Equal(got, []string{"\xa1a", "\xa1b"}) {
		t.Fatalf("list = %q", got)
	}
	if v := rdb.Get(ctx, capKey).Val(); v != "0" {
		t.Fatalf("%s = %q, want 0", capKey, v)
	}
	if n, err := q.RemainingCapacity(ctx); err != nil || n != 0 {
		t.Fatalf("RemainingCapacity = %d, %v; want 0", n, err)
	}
	if n, err := q.Capacity(ctx); err != nil || n != 2 {
		t.Fatalf("Capacity = %d, %v; want 2", n, err)
	}
	if v, ok, err := q.Poll(ctx, 0); err != nil || !ok || v != "a" {
		t.Fatalf("Poll = %q, %v, %v; want a", v, ok, err)
	}
	expectMessage(t, sub, "1")
	if v, err := q.Take(ctx); err != nil || v != "b" {
		t.Fatalf("Take = %q, %v; want b", v, err)
	}
	expectMessage(t, sub, "2")
	if v := rdb.Get(ctx, capKey).Val(); v != "2" {
		t.Fatalf("%s after poll and take = %q, want 2", capKey, v)
	}
	q.Offer(ctx, "d")
	if got, err := q.Drain(ctx, 10); err != nil || !slices.Equal(got, []string{"d"}) {
		t.Fatalf("Drain = %v, %v; want [d]", got, err)
	}
	if v := rdb.Get(ctx, capKey).Val(); v != "2" {
		t.Fatalf("%s after Drain = %q, want 2", capKey, v)
	}
	if existed, err := q.Delete(ctx); err != nil || !existed {
		t.Fatalf("Delete = %v, %v; want true", existed, err)
	}
	if n := rdb.Exists(ctx, capKey, name).Val(); n != 0 {
		t.Fatalf("Delete left %d keys", n)
	}
}

func expectMessage(t *testing.T, sub *redis.PubSub, want string) {
	t.Helper()
	select {
	case m := <-sub.Channel():
		if m.Payload != want {
			t.Fatalf("message %q, want %q", m.Payload, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no message %q", want)
	}
}

// TestBoundedQueuePutWokenByRedissonTake: a Go Put on a full queue waits
// until a Redisson-style take (BLPOP, then the release that increments
// redisson_bqs:{name} and publishes) makes room; a Go Put whose context
// ends appends nothing.
func TestBoundedQueuePutWokenByRedissonTake(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), boundedCapKey(name)) })
	q := GetBoundedBlockingQueue[string](c, name)
	q.TrySetCapacity(ctx, 1)
	if err := q.Put(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := q.Put(short, "never"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Put on a full queue with a short context: got %v, want DeadlineExceeded", err)
	}
	put := async(func() error { return q.Put(ctx, "second") })
	time.Sleep(200 * time.Millisecond)
	stillBlocked(t, put, "Put on a full queue")
	java := &foreignBoundedQueue{foreignQueue{rdb: sharedRedis(t), name: name}}
	if v, ok, err := java.take(ctx); err != nil || !ok || v != "first" {
		t.Fatalf("Java take = %q, %v, %v; want first", v, ok, err)
	}
	await(t, put, 10*time.Second, "Put after the Java take")
	if all, _ := q.ReadAll(ctx); !slices.Equal(all, []string{"second"}) {
		t.Fatalf("queue = %v, want [second]", all)
	}
	// And a Java offer sees the Go bound.
	if ok, err := java.offer(ctx, "third"); err != nil || ok {
		t.Fatalf("Java offer on the full queue = %v, %v; want false", ok, err)
	}
	if v, err := q.Take(ctx); err != nil || v != "second" {
		t.Fatalf("Take = %q, %v", v, err)
	}
	if ok, err := java.offer(ctx, "third"); err != nil || !ok {
		t.Fatalf("Java offer after the Go take = %v, %v; want true", ok, err)
	}
}

// TestBoundedQueueWrongType checks ErrWrongType for a counter or list of
// another type, Redis unchanged.
func TestBoundedQueueWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	capKey := boundedCapKey(name)
	t.Cleanup(func() { rdb.Del(context.Background(), capKey) })
	q := GetBoundedBlockingQueue[string](c, name)
	rdb.HSet(ctx, capKey, "f", "v")
	rdb.RPush(ctx, name, "\xa1x")
	before := nameState(t, rdb, name)
	for what, call := range map[string]func() error{
		"TrySetCapacity":    func() error { _, err := q.TrySetCapacity(ctx, 1); return err },
		"Offer":             func() error { _, err := q.Offer(ctx, "v"); return err },
		"Poll":              func() error { _, _, err := q.Poll(ctx, 0); return err },
		"RemainingCapacity": func() error { _, err := q.RemainingCapacity(ctx); return err },
		"Capacity":          func() error { _, err := q.Capacity(ctx); return err },
	} {
		if err := call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("%s with a hash counter: got %v, want ErrWrongType", what, err)
		}
	}
	if after := nameState(t, rdb, name); after != before {
		t.Errorf("Redis changed:\n got %s\nwant %s", after, before)
	}
	rdb.Del(ctx, capKey, name)
	q.TrySetCapacity(ctx, 1)
	rdb.HSet(ctx, name, "f", "v")
	if _, err := q.Offer(ctx, "v"); !errors.Is(err, ErrWrongType) {
		t.Errorf("Offer on a hash list: got %v, want ErrWrongType", err)
	}
	if v := rdb.Get(ctx, capKey).Val(); v != "1" {
		t.Errorf("Offer on a hash took capacity: %s = %s", capKey, v)
	}
}

// foreignBoundedQueue is a stand-in for Java Redisson's
// RBoundedBlockingQueue, from the recording: offer is a script that checks
// and decrements redisson_bqs:{name} and RPUSHes; take is BLPOP followed by
// a script that increments the counter and publishes it.
type foreignBoundedQueue struct{ foreignQueue }

func (f *foreignBoundedQueue) offer(ctx context.Context, v string) (bool, error) {
	b, _ := MsgpackCodec{}.Marshal(v)
	n, err := f.rdb.Eval(ctx, `local v = redis.call('get', KEYS[1]); assert(v ~= false, 'capacity not set');
if tonumber(v) >= 1 then redis.call('decrby', KEYS[1], 1); redis.call('rpush', KEYS[2], ARGV[1]); return 1 end; return 0`,
		[]string{boundedCapKey(f.name), f.name}, b).Int64()
	return n == 1, err
}

func (f *foreignBoundedQueue) take(ctx context.Context) (string, bool, error) {
	v, ok, err := f.foreignQueue.take(ctx, 5)
	if err != nil || !ok {
		return v, ok, err
	}
	err = f.rdb.Eval(ctx, `local v = redis.call('incrby', KEYS[1], ARGV[1]); redis.call(ARGV[2], KEYS[2], v)`,
		[]string{boundedCapKey(f.name), boundedChannel(f.name)}, 1, "PUBLISH").Err()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return v, true, err
}

// TestBoundedQueueBadInput checks the sentinels of bad input, Redis
// unchanged.
func TestBoundedQueueBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), boundedCapKey(name)) })
	q := GetBoundedBlockingQueue[*string](c, name)
	q.TrySetCapacity(ctx, 1)
	empty := GetBoundedBlockingQueue[string](c, "")
	for _, tc := range []struct {
		what string
		call func() error
		want error
	}{
		{"Offer nil", func() error { _, err := q.Offer(ctx, nil); return err }, ErrNilValue},
		{"Put nil", func() error { return q.Put(ctx, nil) }, ErrNilValue},
		{"TrySetCapacity -1", func() error { _, err := q.TrySetCapacity(ctx, -1); return err }, ErrInvalidCapacity},
		{"Poll negative", func() error { _, _, err := q.Poll(ctx, -time.Millisecond); return err }, ErrNegativeDuration},
		{"Drain 0", func() error { _, err := q.Drain(ctx, 0); return err }, ErrInvalidBatch},
		{"empty Put", func() error { return empty.Put(ctx, "v") }, ErrEmptyName},
		{"empty Capacity", func() error { _, err := empty.Capacity(ctx); return err }, ErrEmptyName},
		{"empty TrySetCapacity", func() error { _, err := empty.TrySetCapacity(ctx, 1); return err }, ErrEmptyName},
	} {
		before := nameState(t, rdb, name)
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.what, err, tc.want)
		}
		if after := nameState(t, rdb, name); after != before {
			t.Errorf("%s: Redis changed:\n got %s\nwant %s", tc.what, after, before)
		}
	}
	other := GetBoundedBlockingQueue[string](c, uniqueName(t, rdb))
	if _, err := other.Capacity(ctx); !errors.Is(err, ErrNotInitialized) {
		t.Errorf("Capacity before TrySetCapacity: got %v, want ErrNotInitialized", err)
	}
	if _, err := other.RemainingCapacity(ctx); !errors.Is(err, ErrNotInitialized) {
		t.Errorf("RemainingCapacity before TrySetCapacity: got %v, want ErrNotInitialized", err)
	}
}

// TestBoundedAndPlainTakersOfOneName: takers of a BlockingQueue and of a
// BoundedBlockingQueue of the same name on one client (two dispatchers,
// two in-flight lists) share the elements, each taken once.
func TestBoundedAndPlainTakersOfOneName(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), boundedCapKey(name)) })
	bounded := GetBoundedBlockingQueue[int](c, name)
	bounded.TrySetCapacity(ctx, 1000)
	plain := GetBlockingQueue[int](c, name)
	const n = 400
	got := make(chan int, n)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var v int
				var ok bool
				var err error
				if i%2 == 0 {
					v, ok, err = plain.Poll(ctx, 500*time.Millisecond)
				} else {
					v, ok, err = bounded.Poll(ctx, 500*time.Millisecond)
				}
				if err != nil || !ok {
					return
				}
				got <- v
			}
		}()
	}
	for i := range n {
		if ok, err := bounded.Offer(ctx, i); err != nil || !ok {
			t.Fatalf("Offer %d = %v, %v", i, ok, err)
		}
	}
	wg.Wait()
	close(got)
	seen := map[int]bool{}
	for v := range got {
		if seen[v] {
			t.Fatalf("%d taken twice", v)
		}
		seen[v] = true
	}
	if rest := rdb.LLen(ctx, name).Val(); len(seen)+int(rest) != n {
		t.Fatalf("%d taken + %d left, want %d", len(seen), rest, n)
	}
}
