package redisson

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// delayDest returns a destination name no other test uses, and deletes the
// destination and the delayed queue's keys when the test ends.
func delayDest(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	k := delayKeysOf(name)
	t.Cleanup(func() { rdb.Del(context.Background(), k.dest, k.timeout, k.list) })
	return name
}

// popDest pops one value of the destination list with BLPOP, as a Go
// Queue or a Java RBlockingQueue would, within d; ok is false when none
// came.
func popDest(t testing.TB, ctx context.Context, rdb redis.UniversalClient, dest string, d time.Duration) (string, bool) {
	t.Helper()
	r, err := rdb.BLPop(ctx, d, dest).Result()
	if errors.Is(err, redis.Nil) {
		return "", false
	}
	if err != nil {
		t.Fatalf("BLPOP %s: %v", dest, err)
	}
	return r[1], true
}

// pending returns the members of the queue's zset and list.
func pending(t testing.TB, ctx context.Context, rdb redis.UniversalClient, dest string) (zset, list []string) {
	t.Helper()
	k := delayKeysOf(dest)
	zset, err := rdb.ZRange(ctx, k.timeout, 0, -1).Result()
	if err != nil {
		t.Fatalf("ZRANGE: %v", err)
	}
	list, err = rdb.LRange(ctx, k.list, 0, -1).Result()
	if err != nil {
		t.Fatalf("LRANGE: %v", err)
	}
	return zset, list
}

// TestDelayedQueueDueOrderAndTiming offers three values out of due order
// and checks that they reach the destination in due order, none before its
// due time and each within a generous bound after it, and what Size,
// Contains and ReadAll report while they are pending.
func TestDelayedQueueDueOrderAndTiming(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	q := GetDelayedQueue[string](newClient(t, rdb, nil), dest)
	if err := q.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	delays := map[string]time.Duration{"c": 900 * time.Millisecond, "a": 300 * time.Millisecond, "b": 600 * time.Millisecond}
	sent := map[string]time.Time{}
	for _, v := range []string{"c", "a", "b"} {
		sent[v] = time.Now()
		if err := q.Offer(ctx, v, delays[v]); err != nil {
			t.Fatalf("Offer(%s): %v", v, err)
		}
	}
	if n, err := q.Size(ctx); err != nil || n != 3 {
		t.Errorf("Size = %d, %v; want 3", n, err)
	}
	if ok, err := q.Contains(ctx, "b"); err != nil || !ok {
		t.Errorf("Contains(b) = %v, %v; want true", ok, err)
	}
	if ok, err := q.Contains(ctx, "z"); err != nil || ok {
		t.Errorf("Contains(z) = %v, %v; want false", ok, err)
	}
	if all, err := q.ReadAll(ctx); err != nil || strings.Join(all, ",") != "a,b,c" {
		t.Errorf("ReadAll = %q, %v; want due order a,b,c", all, err)
	}
	for _, want := range []string{"a", "b", "c"} {
		v, ok := popDest(t, ctx, rdb, dest, 10*time.Second)
		at := time.Now()
		if !ok {
			t.Fatalf("no value in the destination; want %s", want)
		}
		dec, err := decodeValue[string](q.Codec(), "", []byte(v))
		if err != nil || dec != want {
			t.Fatalf("destination value %q (%v); want %s", dec, err, want)
		}
		due := sent[want].Add(delays[want])
		// The server's clock counts whole ms: allow 2 ms before.
		if early := due.Sub(at); early > 2*time.Millisecond {
			t.Errorf("%s appeared %v before its due time", want, early)
		}
		if late := at.Sub(due); late > 3*time.Second {
			t.Errorf("%s appeared %v after its due time", want, late)
		}
	}
	if n, err := q.Size(ctx); err != nil || n != 0 {
		t.Errorf("Size after all moved = %d, %v; want 0", n, err)
	}
	if z, l := pending(t, ctx, rdb, dest); len(z)+len(l) != 0 {
		t.Errorf("pending after all moved: zset %q list %q", z, l)
	}
}

// TestDelayedQueueZeroDelay checks that delay 0 moves the value at once.
func TestDelayedQueueZeroDelay(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	q := GetDelayedQueue[int64](newClient(t, rdb, nil), dest)
	if err := q.Offer(ctx, 42, 0); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	v, ok := popDest(t, ctx, rdb, dest, 10*time.Second)
	if n, err := decodeValue[int64](q.Codec(), "", []byte(v)); !ok || err != nil || n != 42 {
		t.Fatalf("destination: %q %v (%v); want 42", v, ok, err)
	}
}

// TestDelayedQueueRemoveAndDelete checks that a removed value never reaches
// the destination, that Remove takes one of two equal values, and that
// Delete drops everything pending but not the destination.
func TestDelayedQueueRemoveAndDelete(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	q := GetDelayedQueue[string](newClient(t, rdb, nil), dest)
	for _, v := range []string{"gone", "kept", "gone"} {
		if err := q.Offer(ctx, v, 300*time.Millisecond); err != nil {
			t.Fatalf("Offer: %v", err)
		}
	}
	if ok, err := q.Remove(ctx, "gone"); err != nil || !ok {
		t.Fatalf("Remove(gone) = %v, %v; want true", ok, err)
	}
	if ok, err := q.Remove(ctx, "absent"); err != nil || ok {
		t.Fatalf("Remove(absent) = %v, %v; want false", ok, err)
	}
	if all, err := q.ReadAll(ctx); err != nil || len(all) != 2 {
		t.Fatalf("ReadAll after Remove = %q, %v; want two values", all, err)
	}
	var got []string
	for range 2 {
		v, ok := popDest(t, ctx, rdb, dest, 10*time.Second)
		if !ok {
			t.Fatalf("destination: got %q, want two values", got)
		}
		s, _ := decodeValue[string](q.Codec(), "", []byte(v))
		got = append(got, s)
	}
	if strings.Join(got, ",") != "gone,kept" && strings.Join(got, ",") != "kept,gone" {
		t.Errorf("destination got %q; want one gone and one kept", got)
	}
	if v, ok := popDest(t, ctx, rdb, dest, 500*time.Millisecond); ok {
		t.Errorf("removed value reached the destination: %q", v)
	}

	if err := q.Offer(ctx, "later", time.Hour); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	rdb.RPush(ctx, dest, "x")
	if ok, err := q.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	if ok, err := q.Delete(ctx); err != nil || ok {
		t.Fatalf("second Delete = %v, %v; want false", ok, err)
	}
	if n := rdb.LLen(ctx, dest).Val(); n != 1 {
		t.Errorf("Delete touched the destination: %d elements, want 1", n)
	}
}

// runMovers offers n values due over spread to a queue that clients run
// at once, closing the first client after closeAfter (0: never), and
// checks that every value reaches the destination exactly once and nothing
// stays pending.
func runMovers(t *testing.T, clients int, n int, spread, closeAfter time.Duration) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 2*time.Minute)
	dest := delayDest(t, rdb)
	var qs []*DelayedQueue[int]
	var cs []*Client
	for range clients {
		c := newClient(t, rdb, nil)
		q := GetDelayedQueue[int](c, dest)
		if err := q.Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		cs, qs = append(cs, c), append(qs, q)
	}
	// Each client offers its share, in batches of 10 values due at once,
	// value i due about i*spread/n after the start.
	start := time.Now()
	const batch = 10
	offer := func(ci int, q *DelayedQueue[int]) error {
		for i := ci * batch; i < n; i += clients * batch {
			vs := make([]int, 0, batch)
			for j := i; j < min(i+batch, n); j++ {
				vs = append(vs, j)
			}
			due := start.Add(spread * time.Duration(i) / time.Duration(n))
			if err := q.OfferAll(ctx, vs, max(time.Until(due), 0)); err != nil {
				return err
			}
		}
		return nil
	}
	var offers sync.WaitGroup
	errs := make(chan error, clients)
	for ci, q := range qs {
		offers.Go(func() { errs <- offer(ci, q) })
	}
	offers.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("OfferAll: %v", err)
		}
	}
	t.Logf("offered %d values in %v", n, time.Since(start))
	if closeAfter > 0 {
		time.Sleep(time.Until(start.Add(closeAfter)))
		left, _ := qs[1].Size(ctx)
		if err := cs[0].Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		t.Logf("closed a client with %d values pending; it had moved %d", left, cs[0].delayq.stats().moved)
		if left == 0 {
			t.Errorf("nothing pending when the client closed: the test proves nothing")
		}
	}
	seen := make([]int, n)
	got := 0
	deadline := time.Now().Add(spread + 30*time.Second)
	for got < n && time.Now().Before(deadline) {
		vs, err := rdb.LPopCount(ctx, dest, 1000).Result()
		if errors.Is(err, redis.Nil) {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("LPOP: %v", err)
		}
		for _, v := range vs {
			i, err := decodeValue[int](qs[0].Codec(), "", []byte(v))
			if err != nil || i < 0 || i >= n {
				t.Fatalf("destination value %q: %d, %v", v, i, err)
			}
			seen[i]++
			got++
		}
	}
	time.Sleep(200 * time.Millisecond) // a duplicate would be moved by now
	if extra := rdb.LLen(ctx, dest).Val(); extra != 0 {
		t.Errorf("%d values more than offered in the destination", extra)
	}
	for i, k := range seen {
		if k != 1 {
			t.Errorf("value %d appeared %d times, want once", i, k)
			if t.Failed() && i > 20 {
				break
			}
		}
	}
	if z, l := pending(t, ctx, rdb, dest); len(z)+len(l) != 0 {
		t.Errorf("left pending: %d in the zset, %d in the list", len(z), len(l))
	}
	moved := 0
	for _, c := range cs {
		moved += c.delayq.stats().moved
	}
	// A move whose reply the closed client never read is not counted.
	if moved > n || (closeAfter == 0 && moved != n) {
		t.Errorf("the clients' counts add up to %d moves, want %d", moved, n)
	}
}

// TestDelayedQueueThreeClientsMoveEachOnce schedules 10,000 values over
// about 2 s on a queue three clients run at once: each value reaches the
// destination once.
func TestDelayedQueueThreeClientsMoveEachOnce(t *testing.T) {
	runMovers(t, 3, 10000, 2*time.Second, 0)
}

// TestDelayedQueueClientClosedMidway closes one of three clients running
// the queue half-way: the other two move the rest, each value once.
func TestDelayedQueueClientClosedMidway(t *testing.T) {
	runMovers(t, 3, 10000, 2*time.Second, time.Second)
}

// Redisson's elements from the recording (RDelayedQueue.md, steps 2 and
// 4): "d1" and the Long 9 with MsgPackJacksonCodec, each after its random
// id.
const (
	javaDelayD1   = "\x08P`W!%\xbf\x8eI\x03\x00\x00\x00\x00\x00\x00\x00\xa2d1"
	javaDelayLong = "\x08y-\x8c\xf0\x05=&o\x11\x00\x00\x00\x00\x00\x00\x00\x92\xaejava.lang.Long\x09"
)

// TestDelayedQueueMovesJavaElements writes two elements exactly as
// Redisson's offer does (zset, list, message) and checks that a Go client
// running the queue moves Java's value bytes into the destination, which
// decode as Java's values.
func TestDelayedQueueMovesJavaElements(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	k := delayKeysOf(dest)
	q := GetDelayedQueue[any](newClient(t, rdb, nil), dest)
	if err := q.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatalf("TIME: %v", err)
	}
	for i, e := range []string{javaDelayD1, javaDelayLong} {
		due := now.UnixMilli() + int64(200*(i+1))
		rdb.ZAdd(ctx, k.timeout, redis.Z{Score: float64(due), Member: e})
		rdb.RPush(ctx, k.list, e)
		if i == 0 {
			rdb.Publish(ctx, k.channel, strconv.FormatInt(due, 10))
		}
	}
	if all, err := q.ReadAll(ctx); err != nil || fmt.Sprint(all) != "[d1 9]" {
		t.Errorf("ReadAll of Java's elements = %v, %v; want [d1 9]", all, err)
	}
	if ok, err := q.Contains(ctx, int64(9)); err != nil || !ok {
		t.Errorf("Contains(Long 9) = %v, %v; want true", ok, err)
	}
	for _, want := range []string{"\xa2d1", "\x92\xaejava.lang.Long\x09"} {
		v, ok := popDest(t, ctx, rdb, dest, 10*time.Second)
		if !ok || v != want {
			t.Fatalf("destination: %q (%v); want Java's bytes %q", v, ok, want)
		}
	}
}

// TestDelayedQueueOfferWritesRedissonLayout checks what a Go offer writes
// against the recording of Redisson's: the element (8, 8 random bytes,
// length little-endian, the codec's bytes) in the zset at its due time and
// in the list, and the due time published only when the element is the
// earliest.
func TestDelayedQueueOfferWritesRedissonLayout(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	k := delayKeysOf(dest)
	if k.timeout != "redisson_delay_queue_timeout:{"+dest+"}" || k.list != "redisson_delay_queue:{"+dest+"}" ||
		k.channel != "redisson_delay_queue_channel:{"+dest+"}" {
		t.Fatalf("keys %+v are not Redisson's", k)
	}
	ps := rdb.Subscribe(ctx, k.channel)
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	q := GetDelayedQueue[string](newClient(t, rdb, nil), dest)
	before, _ := rdb.Time(ctx).Result()
	if err := q.Offer(ctx, "d1", 2*time.Second); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	after, _ := rdb.Time(ctx).Result()
	if err := q.Offer(ctx, "d2", 3*time.Second); err != nil { // not the earliest: no message
		t.Fatalf("Offer: %v", err)
	}
	if err := q.Offer(ctx, "d3", time.Second); err != nil {
		t.Fatalf("Offer: %v", err)
	}

	var msgs []string
	for len(msgs) < 2 {
		m, err := ps.ReceiveTimeout(ctx, 5*time.Second)
		if err != nil {
			t.Fatalf("messages %q, then %v", msgs, err)
		}
		if msg, ok := m.(*redis.Message); ok {
			msgs = append(msgs, msg.Payload)
		}
	}
	if m, err := ps.ReceiveTimeout(ctx, 300*time.Millisecond); err == nil {
		t.Errorf("a third message: %v; want none for the offer that is not the earliest", m)
	}

	zs, err := rdb.ZRangeWithScores(ctx, k.timeout, 0, -1).Result()
	if err != nil || len(zs) != 3 {
		t.Fatalf("zset: %v, %v", zs, err)
	}
	list := rdb.LRange(ctx, k.list, 0, -1).Val()
	for i, want := range []string{"d3", "d1", "d2"} {
		e := zs[i].Member.(string)
		if len(e) != 17+3 || e[0] != 8 || binary.LittleEndian.Uint64([]byte(e[9:17])) != 3 || e[17:] != "\xa2"+want {
			t.Errorf("zset element %d = %q; want 8, 8 random bytes, length 3 little-endian, %q", i, e, "\xa2"+want)
		}
	}
	if len(list) != 3 || list[0] != zs[1].Member || list[1] != zs[2].Member || list[2] != zs[0].Member {
		t.Errorf("list %q is not the zset's elements %v in offer order", list, zs)
	}
	d1 := int64(zs[1].Score)
	if d1 < before.UnixMilli()+2000 || d1 > after.UnixMilli()+2000 {
		t.Errorf("d1 due at %d, want within [%d, %d] (server time + 2 s)", d1, before.UnixMilli()+2000, after.UnixMilli()+2000)
	}
	if msgs[0] != strconv.FormatInt(d1, 10) || msgs[1] != strconv.FormatInt(int64(zs[0].Score), 10) {
		t.Errorf("messages %q; want the due times of d1 then d3: %d %d", msgs, d1, int64(zs[0].Score))
	}
	if z := zs[0].Member.(string)[1:9]; z == zs[1].Member.(string)[1:9] {
		t.Errorf("two elements share the random id %q", z)
	}
}

// TestDelayedQueueOfferResentSchedulesOnce runs one offer's script twice
// with the same element, as a go-redis resend after a lost reply would:
// the element is pending once, in the zset and in the list.
func TestDelayedQueueOfferResentSchedulesOnce(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	k := delayKeysOf(dest)
	c := newClient(t, rdb, nil)
	e := delayElement([]byte("\xa1v"))
	for range 2 {
		if err := c.scripts.run(ctx, scriptDelayOffer, []string{k.dest, k.timeout, k.list, k.channel}, 60000, e).Err(); err != nil {
			t.Fatalf("offer script: %v", err)
		}
	}
	if z, l := pending(t, ctx, rdb, dest); len(z) != 1 || len(l) != 1 {
		t.Errorf("after a resent offer: zset %q, list %q; want the element once in each", z, l)
	}
}

// TestDelayedQueueBadInput checks every refusal of bad input: the
// documented sentinel, and Redis unchanged.
func TestDelayedQueueBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	c := newClient(t, rdb, nil)
	q := GetDelayedQueue[*string](c, dest)
	s := "v"
	if err := q.Offer(ctx, &s, time.Hour); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	unencodable := GetDelayedQueue[any](c, dest, WithCodec(JSONCodec{}))
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"negative delay", func() error { return q.Offer(ctx, &s, -time.Millisecond) }, ErrNegativeDuration},
		{"negative delay, all", func() error { return q.OfferAll(ctx, []*string{&s}, -time.Second) }, ErrNegativeDuration},
		{"nil value", func() error { return q.Offer(ctx, nil, time.Second) }, ErrNilValue},
		{"nil among values", func() error { return q.OfferAll(ctx, []*string{&s, nil}, time.Second) }, ErrNilValue},
		{"nil to Contains", func() error { _, err := q.Contains(ctx, nil); return err }, ErrNilValue},
		{"nil to Remove", func() error { _, err := q.Remove(ctx, nil); return err }, ErrNilValue},
		{"value that does not encode", func() error { return unencodable.Offer(ctx, make(chan int), time.Second) }, ErrCodec},
		{"empty destination", func() error { return GetDelayedQueue[string](c, "").Offer(ctx, "v", time.Second) }, ErrEmptyName},
		{"empty destination, Start", func() error { return GetDelayedQueue[string](c, "").Start(ctx) }, ErrEmptyName},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := nameState(t, rdb, dest)
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			if after := nameState(t, rdb, dest); after != before {
				t.Errorf("Redis changed:\n got %s\nwant %s", after, before)
			}
		})
	}
}

// TestDelayedQueueWrongType checks that keys of another type are
// ErrWrongType and left unchanged, and that a destination of another type
// strands nothing: the element stays pending and moves once the
// destination is a list again.
func TestDelayedQueueWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	k := delayKeysOf(dest)
	q := GetDelayedQueue[string](newClient(t, rdb, nil), dest)
	for _, key := range []string{k.timeout, k.list} {
		rdb.Set(ctx, key, "foreign", 0)
		before := nameState(t, rdb, dest)
		for name, call := range map[string]func() error{
			"Offer":    func() error { return q.Offer(ctx, "v", time.Second) },
			"Contains": func() error { _, err := q.Contains(ctx, "v"); return err },
			"Remove":   func() error { _, err := q.Remove(ctx, "v"); return err },
		} {
			if err := call(); !errors.Is(err, ErrWrongType) {
				t.Errorf("%s with a string at %s: got %v, want ErrWrongType", name, key, err)
			}
		}
		if key == k.list {
			if _, err := q.Size(ctx); !errors.Is(err, ErrWrongType) {
				t.Errorf("Size with a string at %s: got %v, want ErrWrongType", key, err)
			}
		} else if _, err := q.ReadAll(ctx); !errors.Is(err, ErrWrongType) {
			t.Errorf("ReadAll with a string at %s: got %v, want ErrWrongType", key, err)
		}
		if after := nameState(t, rdb, dest); after != before {
			t.Errorf("Redis changed:\n got %s\nwant %s", after, before)
		}
		rdb.Del(ctx, key)
	}

	rdb.HSet(ctx, dest, "foreign", "1")
	if err := q.Offer(ctx, "v", 0); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	c := q.c
	eventually(t, 10*time.Second, "a failed transfer", func() bool { return c.delayq.stats().failed > 0 })
	if z, l := pending(t, ctx, rdb, dest); len(z) != 1 || len(l) != 1 {
		t.Fatalf("pending with a hash at the destination: zset %q list %q; want the element kept", z, l)
	}
	rdb.Del(ctx, dest)
	v, ok := popDest(t, ctx, rdb, dest, 10*time.Second)
	if !ok || v != "\xa1v" {
		t.Fatalf("destination once a list again: %q %v; want the element", v, ok)
	}
}

// TestDelayedQueueAfterClose checks that every call after Client.Close is
// ErrClientClosed and that Close stopped the client's mover.
func TestDelayedQueueAfterClose(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	c := newClient(t, rdb, nil)
	q := GetDelayedQueue[string](c, dest)
	if err := q.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if n := c.delayq.stats().running; n != 1 {
		t.Fatalf("running = %d before Close, want 1", n)
	}
	c.Close()
	if n := c.delayq.stats().running; n != 0 {
		t.Errorf("running = %d after Close, want 0", n)
	}
	calls := map[string]func() error{
		"Start":    func() error { return q.Start(ctx) },
		"Offer":    func() error { return q.Offer(ctx, "v", 0) },
		"OfferAll": func() error { return q.OfferAll(ctx, []string{"v"}, 0) },
		"Size":     func() error { _, err := q.Size(ctx); return err },
		"Contains": func() error { _, err := q.Contains(ctx, "v"); return err },
		"Remove":   func() error { _, err := q.Remove(ctx, "v"); return err },
		"ReadAll":  func() error { _, err := q.ReadAll(ctx); return err },
		"Delete":   func() error { _, err := q.Delete(ctx); return err },
		"new handle": func() error {
			return GetDelayedQueue[string](c, dest).Offer(ctx, "v", 0)
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClientClosed) {
			t.Errorf("%s after Close: got %v, want ErrClientClosed", name, err)
		}
	}
	q.Destroy() // after Close: no panic, nothing to do
	if s := nameState(t, rdb, dest); s != "" {
		t.Errorf("keys after Close: %s", s)
	}
}

// TestDelayedQueueDestroyStopsMoving checks that after Destroy the client
// moves nothing for the queue, and that Start runs it again and moves what
// became due meanwhile.
func TestDelayedQueueDestroyStopsMoving(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	c := newClient(t, rdb, nil)
	q := GetDelayedQueue[string](c, dest)
	other := GetDelayedQueue[string](c, dest)
	if err := q.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := other.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	other.Destroy()
	if n := c.delayq.stats().running; n != 1 {
		t.Fatalf("running = %d after one of two handles' Destroy, want 1", n)
	}
	q.Destroy()
	q.Destroy()
	if n := c.delayq.stats().running; n != 0 {
		t.Fatalf("running = %d after Destroy, want 0", n)
	}
	if err := q.Offer(ctx, "v", 100*time.Millisecond); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	if v, ok := popDest(t, ctx, rdb, dest, time.Second); ok {
		t.Fatalf("moved %q with no handle running the queue", v)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if v, ok := popDest(t, ctx, rdb, dest, 10*time.Second); !ok || v != "\xa1v" {
		t.Fatalf("after Start: %q %v; want the element", v, ok)
	}
}

// TestDelayedQueueLostMessageAfterReconnect writes an element as an offer
// would, without its message (lost while the pub/sub connection was
// down), and kills the client's pub/sub connection: once resubscribed, the
// client re-reads the earliest due time and moves the element.
func TestDelayedQueueLostMessageAfterReconnect(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	k := delayKeysOf(dest)
	q := GetDelayedQueue[string](newClient(t, rdb, nil), dest)
	if err := q.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	now, _ := rdb.Time(ctx).Result()
	rdb.ZAdd(ctx, k.timeout, redis.Z{Score: float64(now.UnixMilli() + 500), Member: javaDelayD1})
	rdb.RPush(ctx, k.list, javaDelayD1)
	if err := rdb.ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatalf("CLIENT KILL: %v", err)
	}
	if v, ok := popDest(t, ctx, rdb, dest, 20*time.Second); !ok || v != "\xa2d1" {
		t.Fatalf("destination: %q %v; want the element moved after the reconnect", v, ok)
	}
}

// TestDelayedQueueCluster runs a queue on a 3-master cluster: the keys and
// the destination share the destination's slot, and values are moved.
func TestDelayedQueueCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	ctx := testCtx(t, time.Minute)
	for _, dest := range []string{"delayq:cluster:" + strconv.FormatInt(time.Now().UnixNano(), 36), "{delayq}:tagged"} {
		k := delayKeysOf(dest)
		t.Cleanup(func() { rdb.Del(context.Background(), k.dest); rdb.Del(context.Background(), k.timeout, k.list) })
		slot := cl.SlotOf(t, dest)
		for _, key := range []string{k.timeout, k.list, k.channel} {
			if s := cl.SlotOf(t, key); s != slot {
				t.Errorf("%s in slot %d, the destination %s in %d", key, s, dest, slot)
			}
		}
		q := GetDelayedQueue[string](newClient(t, rdb, nil), dest)
		if err := q.OfferAll(ctx, []string{"a", "b"}, 200*time.Millisecond); err != nil {
			t.Fatalf("OfferAll: %v", err)
		}
		var got []string
		for range 2 {
			v, ok := popDest(t, ctx, rdb, dest, 10*time.Second)
			if !ok {
				t.Fatalf("%s: destination got %q, want two values", dest, got)
			}
			got = append(got, v)
		}
		if n, err := q.Size(ctx); err != nil || n != 0 {
			t.Errorf("Size = %d, %v; want 0", n, err)
		}
	}
	bad := GetDelayedQueue[string](newClient(t, rdb, nil), "a{b")
	if err := bad.Offer(ctx, "v", 0); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Offer on a name with braces but no hash tag: %v, want ErrInvalidName", err)
	}
}

// TestDelayedQueueHungServerRetried hangs the server while an element
// comes due: the client's moves fail (read timeouts) and are retried, and
// the element is moved, once, when the server answers again.
func TestDelayedQueueHungServerRetried(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.ReadTimeout, o.MaxRetries = 300*time.Millisecond, 0 })
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	c := newClient(t, rdb, nil)
	q := GetDelayedQueue[string](c, dest)
	if err := q.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := q.Offer(ctx, "v", 2*time.Second); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	// Pause well before the element is due, once the offer's message has
	// had time to reach the client (a paused server may not have written
	// it yet when the offer's reply arrived).
	time.Sleep(300 * time.Millisecond)
	srv.Pause()
	resumed := false
	defer func() {
		if !resumed {
			srv.Resume()
		}
	}()
	eventually(t, 20*time.Second, "a failed move while the server hangs", func() bool { return c.delayq.stats().failed > 0 })
	srv.Resume()
	resumed = true
	admin := srv.Client(t)
	if v, ok := popDest(t, ctx, admin, dest, 20*time.Second); !ok || v != "\xa1v" {
		t.Fatalf("destination after the server came back: %q %v; want the element", v, ok)
	}
	// The timed-out moves reached the hung server and ran when it resumed:
	// each found the element moved or moved it, never twice.
	if v, ok := popDest(t, ctx, admin, dest, time.Second); ok {
		t.Errorf("a second value in the destination: %q", v)
	}
	if z, l := pending(t, ctx, admin, dest); len(z)+len(l) != 0 {
		t.Errorf("left pending: zset %q list %q", z, l)
	}
}
