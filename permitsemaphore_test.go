package redisson

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// permitName returns a semaphore name no other test uses; its count, its
// timeout zset and its latch keys are deleted when the test ends.
func permitName(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		ctx := context.Background()
		rdb.Del(ctx, suffixName(name, "timeout"), prefixName("redisson_sc_queue", name), prefixName("redisson_sc_waiters", name))
		if c, ok := rdb.(*redis.Client); ok {
			pattern := strings.NewReplacer("{", "\\{", "}", "\\}").Replace(prefixName("redisson_permit_latch", name)) + ":*"
			if ks, _, err := c.Scan(ctx, 0, pattern, 10000).Result(); err == nil && len(ks) > 0 {
				c.Del(ctx, ks...)
			}
		}
	})
	return name
}

// permitState snapshots the keys of semaphore name, to check that a call left
// Redis unchanged.
func permitState(t testing.TB, rdb redis.UniversalClient, name string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, k := range []string{name, suffixName(name, "timeout"), prefixName("redisson_sc_queue", name), prefixName("redisson_sc_waiters", name)} {
		typ := rdb.Type(ctx, k).Val()
		fmt.Fprintf(&b, "%s:%s=", k, typ)
		switch typ {
		case "string":
			b.WriteString(rdb.Get(ctx, k).Val())
		case "hash":
			fmt.Fprint(&b, rdb.HGetAll(ctx, k).Val())
		case "zset":
			for _, z := range rdb.ZRangeWithScores(ctx, k, 0, -1).Val() {
				fmt.Fprintf(&b, "%x@%.0f,", z.Member, z.Score)
			}
		}
		b.WriteString(";")
	}
	return b.String()
}

// heldPermits returns the hex ids in the timeout zset of name, sorted, with
// their scores.
func heldPermits(t testing.TB, rdb redis.UniversalClient, name string) (ids []string, scores map[string]float64) {
	t.Helper()
	zs, err := rdb.ZRangeWithScores(context.Background(), suffixName(name, "timeout"), 0, -1).Result()
	if err != nil {
		t.Fatalf("ZRANGE timeout: %v", err)
	}
	scores = make(map[string]float64)
	for _, z := range zs {
		id := hex.EncodeToString([]byte(z.Member.(string)))
		ids = append(ids, id)
		scores[id] = z.Score
	}
	sort.Strings(ids)
	return ids, scores
}

func serverMs(t testing.TB, rdb redis.UniversalClient) float64 {
	t.Helper()
	tm, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatalf("TIME: %v", err)
	}
	return float64(tm.UnixMilli())
}

func mustAvailable(t testing.TB, ctx context.Context, s *PermitExpirableSemaphore, want int64) {
	t.Helper()
	if got, err := s.AvailablePermits(ctx); err != nil || got != want {
		t.Fatalf("AvailablePermits = %d, %v; want %d", got, err, want)
	}
}

func mustTrySetPermits(t testing.TB, ctx context.Context, s *PermitExpirableSemaphore, n int64) {
	t.Helper()
	if ok, err := s.TrySetPermits(ctx, n); err != nil || !ok {
		t.Fatalf("TrySetPermits(%d) = %v, %v; want true", n, ok, err)
	}
}

func mustTryAcquirePermit(t testing.TB, ctx context.Context, s *PermitExpirableSemaphore, wait, lease time.Duration) string {
	t.Helper()
	id, ok, err := s.TryAcquire(ctx, wait, lease)
	if err != nil || !ok {
		t.Fatalf("TryAcquire(%v, %v) = %q, %v, %v; want a permit", wait, lease, id, ok, err)
	}
	return id
}

var permitIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestPermitSemaphoreAcquireRelease(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, rdb)
	s := c.GetPermitExpirableSemaphore(name)
	if s.Name() != name {
		t.Fatalf("Name = %q, want %q", s.Name(), name)
	}
	mustAvailable(t, ctx, s, 0) // never set
	mustTrySetPermits(t, ctx, s, 2)
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || ok {
		t.Fatalf("second TrySetPermits = %v, %v; want false", ok, err)
	}
	mustAvailable(t, ctx, s, 2)

	before := serverMs(t, rdb)
	forever := mustTryAcquirePermit(t, ctx, s, 0, 0)
	leased := mustTryAcquirePermit(t, ctx, s, 0, time.Minute)
	after := serverMs(t, rdb)
	for _, id := range []string{forever, leased} {
		if !permitIDPattern.MatchString(id) {
			t.Fatalf("permit id %q; want 32 lowercase hex digits", id)
		}
	}
	ids, scores := heldPermits(t, rdb, name)
	want := []string{forever, leased}
	sort.Strings(want)
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("timeout zset holds %v; want the raw bytes of %v", ids, want)
	}
	if got := scores[forever]; got != permitNoExpiry {
		t.Fatalf("score of a permit without lease = %.0f; want %d", got, permitNoExpiry)
	}
	if got := scores[leased]; got < before+60000 || got > after+60000 {
		t.Fatalf("score of a 1m permit = %.0f; want server time + 60000 in [%.0f, %.0f]", got, before+60000, after+60000)
	}

	if id, ok, err := s.TryAcquire(ctx, 0, 0); err != nil || ok || id != "" {
		t.Fatalf("TryAcquire with no permit left = %q, %v, %v; want \"\", false, nil", id, ok, err)
	}
	start := time.Now()
	if _, ok, err := s.TryAcquire(ctx, 200*time.Millisecond, 0); err != nil || ok {
		t.Fatalf("TryAcquire(200ms) with no permit left = %v, %v; want false, nil", ok, err)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Fatalf("TryAcquire(200ms) gave up after %v", waited)
	}
	mustAvailable(t, ctx, s, 0)
	if n, err := s.AcquiredPermits(ctx); err != nil || n != 2 {
		t.Fatalf("AcquiredPermits = %d, %v; want 2", n, err)
	}

	if err := s.Release(ctx, forever); err != nil {
		t.Fatalf("Release: %v", err)
	}
	mustAvailable(t, ctx, s, 1)
	state := permitState(t, rdb, name)
	if err := s.Release(ctx, forever); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("second Release of one permit: %v; want ErrUnknownPermit", err)
	}
	if got := permitState(t, rdb, name); got != state {
		t.Fatalf("failed Release changed Redis:\n got %s\nwant %s", got, state)
	}
	// Ids are accepted in upper case too (Redisson decodes either).
	if err := s.Release(ctx, strings.ToUpper(leased)); err != nil {
		t.Fatalf("Release(upper case id): %v", err)
	}
	mustAvailable(t, ctx, s, 2)
	if n := rdb.Exists(ctx, suffixName(name, "timeout")).Val(); n != 0 {
		t.Fatal("timeout zset still exists with no permit held")
	}
	if ok, err := s.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	if ok, err := s.Delete(ctx); err != nil || ok {
		t.Fatalf("Delete of a deleted semaphore = %v, %v; want false", ok, err)
	}
	mustAvailable(t, ctx, s, 0)
}

func TestPermitSemaphoreAddPermits(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, rdb)
	s := c.GetPermitExpirableSemaphore(name)
	for _, st := range []struct{ add, want int64 }{{10, 10}, {5, 15}, {-10, 5}, {-10, -5}} {
		if got, err := s.AddPermits(ctx, st.add); err != nil || got != st.want {
			t.Fatalf("AddPermits(%d) = %d, %v; want %d", st.add, got, err, st.want)
		}
	}
	mustAvailable(t, ctx, s, -5)
	if _, ok, err := s.TryAcquire(ctx, 0, 0); err != nil || ok {
		t.Fatalf("TryAcquire with -5 available = %v, %v; want false", ok, err)
	}
	if ok, err := s.TrySetPermits(ctx, 3); err != nil || ok {
		t.Fatalf("TrySetPermits on a set semaphore = %v, %v; want false", ok, err)
	}
	// INCRBY keeps a TTL the key has (Redisson's SET would drop it).
	rdb.PExpire(ctx, name, time.Minute)
	if got, err := s.AddPermits(ctx, 6); err != nil || got != 1 {
		t.Fatalf("AddPermits(6) = %d, %v; want 1", got, err)
	}
	if ttl := rdb.PTTL(ctx, name).Val(); ttl <= 0 {
		t.Fatalf("PTTL after AddPermits = %v; want the TTL kept", ttl)
	}
	// A permit acquired while the count has a TTL gives the zset the same
	// TTL (as Redisson does), so both keys expire together.
	mustTryAcquirePermit(t, ctx, s, 0, 0)
	if ttl := rdb.PTTL(ctx, suffixName(name, "timeout")).Val(); ttl <= 0 {
		t.Fatalf("PTTL of the timeout zset = %v; want the count's TTL", ttl)
	}
}

// A holder that never releases (it crashed) gives its permit back when its
// lease ends, and a waiter in another client wakes then, not at its own
// timeout.
func TestPermitSemaphoreLeaseEndWakesWaiter(t *testing.T) {
	for _, mode := range []string{"Acquire", "TryAcquire"} {
		t.Run(mode, func(t *testing.T) {
			rdb := sharedRedis(t)
			holder := newClient(t, rdb, nil).GetPermitExpirableSemaphore(permitName(t, rdb))
			waiter := newClient(t, sharedRedis(t), nil).GetPermitExpirableSemaphore(holder.Name())
			ctx := testCtx(t, 30*time.Second)
			mustTrySetPermits(t, ctx, holder, 1)
			crashed := mustTryAcquirePermit(t, ctx, holder, 0, 500*time.Millisecond)
			start := time.Now()
			var id string
			var err error
			if mode == "Acquire" {
				id, err = waiter.Acquire(ctx, 0)
			} else {
				id, _, err = waiter.TryAcquire(ctx, 20*time.Second, 0)
			}
			waited := time.Since(start)
			if err != nil || id == "" {
				t.Fatalf("%s = %q, %v", mode, id, err)
			}
			t.Logf("waiter acquired %v after the holder's 500ms lease began", waited)
			if waited < 400*time.Millisecond || waited > 3*time.Second {
				t.Fatalf("waiter acquired after %v; want when the 500ms lease ended (long before its own 20-30s)", waited)
			}
			if err := holder.Release(ctx, crashed); !errors.Is(err, ErrUnknownPermit) {
				t.Fatalf("Release of an expired permit: %v; want ErrUnknownPermit", err)
			}
			mustAvailable(t, ctx, waiter, 0)
			if err := waiter.Release(ctx, id); err != nil {
				t.Fatal(err)
			}
			mustAvailable(t, ctx, waiter, 1)
		})
	}
}

// Several waiters of one client, most of them queued behind the first
// without trying, each get a permit as the leases of a crashed holder end
// one after the other.
func TestPermitSemaphoreQueuedWaitersWakeAtEachExpiry(t *testing.T) {
	rdb := sharedRedis(t)
	holder := newClient(t, rdb, nil).GetPermitExpirableSemaphore(permitName(t, rdb))
	wc := newClient(t, sharedRedis(t), nil)
	ctx := testCtx(t, 30*time.Second)
	mustTrySetPermits(t, ctx, holder, 3)
	leases := []time.Duration{400 * time.Millisecond, 800 * time.Millisecond, 1200 * time.Millisecond}
	for _, l := range leases {
		mustTryAcquirePermit(t, ctx, holder, 0, l)
	}
	start := time.Now()
	got := make(chan time.Duration, len(leases))
	for range leases {
		go func() {
			w := wc.GetPermitExpirableSemaphore(holder.Name())
			id, err := w.Acquire(ctx, time.Minute)
			if err != nil {
				t.Errorf("Acquire: %v", err)
			}
			got <- time.Since(start)
			_ = id // held until the test's keys are deleted
		}()
	}
	for i, l := range leases {
		select {
		case d := <-got:
			t.Logf("waiter %d acquired after %v (lease %v)", i, d, l)
			if d > l+2*time.Second {
				t.Fatalf("waiter %d acquired after %v; want soon after the lease of %v", i, d, l)
			}
		case <-time.After(l + 5*time.Second):
			t.Fatalf("waiter %d not woken %v after the lease of %v ended", i, 5*time.Second, l)
		}
	}
}

// A call that finds expired permits gives them back and announces the new
// count, so that waiters of every client wake.
func TestPermitSemaphoreReclaimPublishes(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	s := c.GetPermitExpirableSemaphore(permitName(t, rdb))
	mustTrySetPermits(t, ctx, s, 1)
	ps := rdb.Subscribe(ctx, prefixName("redisson_sc", s.Name()))
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	mustTryAcquirePermit(t, ctx, s, 0, 100*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	mustAvailable(t, ctx, s, 1)
	msg, err := ps.ReceiveMessage(testCtx(t, 5*time.Second))
	if err != nil || javaLong(msg.Payload) != 1 {
		t.Fatalf("message after reclaim = %v, %v; want 1, as Redisson reads it", msg, err)
	}
}

func TestPermitSemaphoreUpdateLease(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, rdb)
	s := c.GetPermitExpirableSemaphore(name)
	mustTrySetPermits(t, ctx, s, 3)
	for _, id := range []string{"1234", strings.Repeat("ab", 16)} {
		if ok, err := s.UpdateLease(ctx, id, time.Second); err != nil || ok {
			t.Fatalf("UpdateLease(unknown %q) = %v, %v; want false, nil", id, ok, err)
		}
	}

	// Shorten: a permit without lease gets one, and comes back when it ends.
	shortened := mustTryAcquirePermit(t, ctx, s, 0, 0)
	before := serverMs(t, rdb)
	if ok, err := s.UpdateLease(ctx, shortened, 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("UpdateLease(300ms) = %v, %v; want true", ok, err)
	}
	if _, scores := heldPermits(t, rdb, name); scores[shortened] < before+300 || scores[shortened] > serverMs(t, rdb)+300 {
		t.Fatalf("score after UpdateLease(300ms) = %.0f; want server time + 300", scores[shortened])
	}
	// Make one expiring, then never expiring.
	kept := mustTryAcquirePermit(t, ctx, s, 0, 300*time.Millisecond)
	if ok, err := s.UpdateLease(ctx, kept, 0); err != nil || !ok {
		t.Fatalf("UpdateLease(0) = %v, %v; want true", ok, err)
	}
	// Extend.
	extended := mustTryAcquirePermit(t, ctx, s, 0, 300*time.Millisecond)
	if ok, err := s.UpdateLease(ctx, extended, time.Minute); err != nil || !ok {
		t.Fatalf("UpdateLease(1m) = %v, %v; want true", ok, err)
	}
	time.Sleep(600 * time.Millisecond)
	mustAvailable(t, ctx, s, 1) // the shortened one came back
	if n, err := s.AcquiredPermits(ctx); err != nil || n != 2 {
		t.Fatalf("AcquiredPermits = %d, %v; want 2", n, err)
	}
	if ok, err := s.UpdateLease(ctx, shortened, time.Minute); err != nil || ok {
		t.Fatalf("UpdateLease of an expired permit = %v, %v; want false", ok, err)
	}
	if err := s.Release(ctx, shortened); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("Release of the shortened permit: %v; want ErrUnknownPermit", err)
	}
	if _, scores := heldPermits(t, rdb, name); scores[kept] != permitNoExpiry {
		t.Fatalf("score after UpdateLease(0) = %.0f; want %d", scores[kept], permitNoExpiry)
	}
	for _, id := range []string{kept, extended} {
		if err := s.Release(ctx, id); err != nil {
			t.Fatalf("Release of a kept permit: %v", err)
		}
	}
	mustAvailable(t, ctx, s, 3)
}

// A key of another type, or a count that is not an integer: every call
// returns ErrWrongType and writes nothing, even when expired permits would
// otherwise be given back.
func TestPermitSemaphoreWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	expiredMember := func(name string) {
		rdb.ZAdd(ctx, suffixName(name, "timeout"), redis.Z{Score: 1000, Member: "0123456789abcdef"})
	}
	cases := []struct {
		name    string
		setup   func(name string)
		countOK bool // TrySetPermits and AddPermits do not read the zset
	}{
		{"count is a hash", func(n string) { rdb.HSet(ctx, n, "f", "v") }, false},
		{"count is a hash, expired permit", func(n string) { rdb.HSet(ctx, n, "f", "v"); expiredMember(n) }, false},
		{"count is not an integer", func(n string) { rdb.Set(ctx, n, "abc", 0); expiredMember(n) }, false},
		{"zset is a string", func(n string) { rdb.Set(ctx, n, "1", 0); rdb.Set(ctx, suffixName(n, "timeout"), "x", 0) }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := permitName(t, rdb)
			tc.setup(name)
			s := c.GetPermitExpirableSemaphore(name)
			id := strings.Repeat("0f", 16)
			calls := map[string]func() error{
				"TryAcquire":       func() error { _, _, err := s.TryAcquire(ctx, 0, 0); return err },
				"TryAcquire(wait)": func() error { _, _, err := s.TryAcquire(ctx, time.Second, time.Second); return err },
				"Acquire":          func() error { _, err := s.Acquire(ctx, 0); return err },
				"Release":          func() error { return s.Release(ctx, id) },
				"UpdateLease":      func() error { _, err := s.UpdateLease(ctx, id, time.Second); return err },
				"AvailablePermits": func() error { _, err := s.AvailablePermits(ctx); return err },
				"AcquiredPermits":  func() error { _, err := s.AcquiredPermits(ctx); return err },
			}
			if !tc.countOK {
				calls["AddPermits"] = func() error { _, err := s.AddPermits(ctx, 1); return err }
			}
			if strings.HasPrefix(tc.name, "count is a hash") {
				calls["TrySetPermits"] = func() error { _, err := s.TrySetPermits(ctx, 1); return err }
			}
			for what, call := range calls {
				before := permitState(t, rdb, name)
				if err := call(); !errors.Is(err, ErrWrongType) {
					t.Fatalf("%s: %v; want ErrWrongType", what, err)
				}
				if after := permitState(t, rdb, name); after != before {
					t.Fatalf("%s changed Redis:\n got %s\nwant %s", what, after, before)
				}
			}
		})
	}
}

func TestPermitSemaphoreBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, rdb)
	s := c.GetPermitExpirableSemaphore(name)
	mustTrySetPermits(t, ctx, s, 3)
	held := mustTryAcquirePermit(t, ctx, s, 0, time.Minute)
	cases := []struct {
		what string
		call func(s *PermitExpirableSemaphore) error
		want error
	}{
		{"TryAcquire negative wait", func(s *PermitExpirableSemaphore) error { _, _, err := s.TryAcquire(ctx, -time.Second, 0); return err }, ErrNegativeDuration},
		{"TryAcquire negative lease", func(s *PermitExpirableSemaphore) error {
			_, _, err := s.TryAcquire(ctx, 0, -time.Nanosecond)
			return err
		}, ErrNegativeDuration},
		{"Acquire negative lease", func(s *PermitExpirableSemaphore) error { _, err := s.Acquire(ctx, -time.Second); return err }, ErrNegativeDuration},
		{"UpdateLease negative lease", func(s *PermitExpirableSemaphore) error { _, err := s.UpdateLease(ctx, held, -time.Second); return err }, ErrNegativeDuration},
		{"TrySetPermits negative", func(s *PermitExpirableSemaphore) error { _, err := s.TrySetPermits(ctx, -1); return err }, ErrInvalidPermits},
		{"Release empty id", func(s *PermitExpirableSemaphore) error { return s.Release(ctx, "") }, ErrUnknownPermit},
		{"Release short id", func(s *PermitExpirableSemaphore) error { return s.Release(ctx, "1234") }, ErrUnknownPermit},
		{"Release non-hex id", func(s *PermitExpirableSemaphore) error { return s.Release(ctx, strings.Repeat("zz", 16)) }, ErrUnknownPermit},
		{"Release long id", func(s *PermitExpirableSemaphore) error { return s.Release(ctx, held+"00") }, ErrUnknownPermit},
		{"Release unknown id", func(s *PermitExpirableSemaphore) error { return s.Release(ctx, strings.Repeat("01", 16)) }, ErrUnknownPermit},
	}
	for _, tc := range cases {
		before := permitState(t, rdb, name)
		if err := tc.call(s); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v; want %v", tc.what, err, tc.want)
		}
		if after := permitState(t, rdb, name); after != before {
			t.Errorf("%s changed Redis:\n got %s\nwant %s", tc.what, after, before)
		}
	}

	// Every method of an unnamed semaphore, and of a closed client.
	all := map[string]func(s *PermitExpirableSemaphore) error{
		"TrySetPermits":    func(s *PermitExpirableSemaphore) error { _, err := s.TrySetPermits(ctx, 1); return err },
		"AddPermits":       func(s *PermitExpirableSemaphore) error { _, err := s.AddPermits(ctx, 1); return err },
		"Acquire":          func(s *PermitExpirableSemaphore) error { _, err := s.Acquire(ctx, 0); return err },
		"TryAcquire":       func(s *PermitExpirableSemaphore) error { _, _, err := s.TryAcquire(ctx, 0, 0); return err },
		"Release":          func(s *PermitExpirableSemaphore) error { return s.Release(ctx, held) },
		"UpdateLease":      func(s *PermitExpirableSemaphore) error { _, err := s.UpdateLease(ctx, held, 0); return err },
		"AvailablePermits": func(s *PermitExpirableSemaphore) error { _, err := s.AvailablePermits(ctx); return err },
		"AcquiredPermits":  func(s *PermitExpirableSemaphore) error { _, err := s.AcquiredPermits(ctx); return err },
		"Delete":           func(s *PermitExpirableSemaphore) error { _, err := s.Delete(ctx); return err },
	}
	closed, err := New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	before := permitState(t, rdb, name)
	for what, call := range all {
		if err := call(c.GetPermitExpirableSemaphore("")); !errors.Is(err, ErrEmptyName) {
			t.Errorf("%s on an empty name: %v; want ErrEmptyName", what, err)
		}
		if err := call(closed.GetPermitExpirableSemaphore(name)); !errors.Is(err, ErrClientClosed) {
			t.Errorf("%s after Close: %v; want ErrClientClosed", what, err)
		}
	}
	if after := permitState(t, rdb, name); after != before {
		t.Errorf("calls on a closed client changed Redis:\n got %s\nwant %s", after, before)
	}
}

// A waiter whose context ends, or whose wait runs out, takes nothing and
// leaves no subscription.
func TestPermitSemaphoreCancelLeavesNothing(t *testing.T) {
	rdb := sharedRedis(t)
	holder := newClient(t, rdb, nil).GetPermitExpirableSemaphore(permitName(t, rdb))
	wc := newClient(t, sharedRedis(t), nil)
	ctx := testCtx(t, 30*time.Second)
	name := holder.Name()
	mustTrySetPermits(t, ctx, holder, 2)
	mustTryAcquirePermit(t, ctx, holder, 0, 0)
	mustTryAcquirePermit(t, ctx, holder, 0, time.Minute) // waiters have a lease to wait for
	state := permitState(t, rdb, name)
	channel := prefixName("redisson_sc", name)
	w := wc.GetPermitExpirableSemaphore(name)

	cctx, cancel := context.WithCancel(ctx)
	done := async(func() error { _, err := w.Acquire(cctx, 0); return err })
	waitSubscribers(t, rdb, channel, 1)
	stillBlocked(t, done, "Acquire")
	eventually(t, 5*time.Second, "the waiter queued", func() bool { return rdb.ZCard(ctx, w.keys[3]).Val() == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Acquire: %v; want context.Canceled", err)
		}
	case <-time.After(wakeBound):
		t.Fatal("cancelled Acquire did not return")
	}

	dctx, dcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer dcancel()
	if _, ok, err := w.TryAcquire(dctx, 10*time.Second, 0); ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryAcquire past its context's deadline = %v, %v; want DeadlineExceeded", ok, err)
	}
	if _, ok, err := w.TryAcquire(ctx, 300*time.Millisecond, time.Second); ok || err != nil {
		t.Fatalf("TryAcquire(300ms) = %v, %v; want false, nil", ok, err)
	}
	if got := permitState(t, rdb, name); got != state {
		t.Fatalf("cancelled waits changed Redis:\n got %s\nwant %s", got, state)
	}
	eventually(t, 10*time.Second, "subscription dropped after the waiters left", func() bool {
		return rdb.PubSubNumSub(ctx, channel).Val()[channel] == 0 && wc.pubsub.stats().channels == 0
	})
}

// Release runs even with a cancelled context (the caller's clean-up path).
func TestPermitSemaphoreReleaseWithCancelledContext(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	s := c.GetPermitExpirableSemaphore(permitName(t, rdb))
	mustTrySetPermits(t, ctx, s, 1)
	id := mustTryAcquirePermit(t, ctx, s, 0, 0)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Release(cctx, id); err != nil {
		t.Fatalf("Release with a cancelled context: %v", err)
	}
	mustAvailable(t, ctx, s, 1)
}

// A message carrying the new count v wakes up to v waiters: one permit
// added wakes one of two waiters, the next wakes the other.
func TestPermitSemaphoreAddWakesWaiters(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	wc := newClient(t, sharedRedis(t), nil)
	ctx := testCtx(t, 30*time.Second)
	s := c.GetPermitExpirableSemaphore(permitName(t, rdb))
	mustTrySetPermits(t, ctx, s, 0)
	results := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := wc.GetPermitExpirableSemaphore(s.Name()).Acquire(ctx, time.Minute)
			results <- err
		}()
	}
	waitSubscribers(t, rdb, prefixName("redisson_sc", s.Name()), 1)
	time.Sleep(200 * time.Millisecond) // all three waiting
	if _, err := s.AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-results; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-results:
		t.Fatalf("a second waiter returned (%v) with one permit added", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := s.AddPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case err := <-results:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(wakeBound):
			t.Fatal("waiter not woken by AddPermits(2)")
		}
	}
	mustAvailable(t, ctx, s, 0)
}

// go-redis resends a call whose reply was lost: each call still takes,
// returns or adds exactly once.
func TestPermitSemaphoreIdempotentAcrossLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: 3})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, direct)
	s := c.GetPermitExpirableSemaphore(name)
	// Load every script and leave the one connection idle.
	warm := c.GetPermitExpirableSemaphore(permitName(t, direct))
	warm.TrySetPermits(ctx, 1)
	warm.AddPermits(ctx, 1)
	id := mustTryAcquirePermit(t, ctx, warm, 0, 0)
	warm.UpdateLease(ctx, id, 0)
	warm.Release(ctx, id)
	warm.AvailablePermits(ctx)

	count := func() string { return direct.Get(ctx, name).Val() }
	var held string
	steps := []struct {
		what string
		do   func() error
		want string // count afterwards
		zset int64  // permits held afterwards
	}{
		{"TrySetPermits", func() error {
			if ok, err := s.TrySetPermits(ctx, 3); err != nil || !ok {
				return fmt.Errorf("= %v, %v; want true", ok, err)
			}
			return nil
		}, "3", 0},
		{"TryAcquire", func() error {
			var ok bool
			var err error
			if held, ok, err = s.TryAcquire(ctx, 0, 0); err != nil || !ok {
				return fmt.Errorf("= %v, %v; want a permit", ok, err)
			}
			return nil
		}, "2", 1},
		{"UpdateLease", func() error {
			if ok, err := s.UpdateLease(ctx, held, time.Minute); err != nil || !ok {
				return fmt.Errorf("= %v, %v; want true", ok, err)
			}
			return nil
		}, "2", 1},
		{"Release", func() error { return s.Release(ctx, held) }, "3", 0},
		{"AddPermits", func() error {
			if n, err := s.AddPermits(ctx, 2); err != nil || n != 5 {
				return fmt.Errorf("= %d, %v; want 5", n, err)
			}
			return nil
		}, "5", 0},
	}
	for _, st := range steps {
		dropped := proxy.Dropped()
		proxy.DropNextReply()
		if err := st.do(); err != nil {
			t.Fatalf("%s with a lost reply: %v", st.what, err)
		}
		if proxy.Dropped() != dropped+1 {
			t.Fatalf("%s: no reply was dropped", st.what)
		}
		if got, n := count(), direct.ZCard(ctx, suffixName(name, "timeout")).Val(); got != st.want || n != st.zset {
			t.Fatalf("after %s with a lost reply: count %q, %d held; want %q, %d", st.what, got, n, st.want, st.zset)
		}
		if st.what == "TryAcquire" {
			if ids, _ := heldPermits(t, direct, name); len(ids) != 1 || ids[0] != held {
				t.Fatalf("held permits %v; want the returned id %s", ids, held)
			}
		}
	}
	// A new Release of the released id is still refused.
	if err := s.Release(ctx, held); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("Release after a released permit: %v; want ErrUnknownPermit", err)
	}
}

// Without go-redis retries a lost acquire reply is an error, and the permit
// the script took is given back before the call returns.
func TestPermitSemaphoreLostReplyWithoutRetryLeavesNothing(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: -1})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, direct)
	s := c.GetPermitExpirableSemaphore(name)
	mustTrySetPermits(t, ctx, s, 2)
	s.Release(ctx, mustTryAcquirePermit(t, ctx, s, 0, 0)) // scripts loaded
	state := permitState(t, direct, name)
	proxy.DropNextReply()
	if id, ok, err := s.TryAcquire(ctx, 0, 0); err == nil {
		t.Fatalf("TryAcquire with a lost reply and no retries = %q, %v, nil; want an error", id, ok)
	}
	if got := permitState(t, direct, name); got != state {
		t.Fatalf("failed acquire left a permit taken:\n got %s\nwant %s", got, state)
	}
}

// Clients × goroutines over k permits: never more than k holders at once.
func TestPermitSemaphoreNeverMoreThanK(t *testing.T) {
	const k, clients, goroutines, rounds = 3, 4, 6, 15
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := permitName(t, rdb)
	mustTrySetPermits(t, ctx, newClient(t, rdb, nil).GetPermitExpirableSemaphore(name), k)
	var holders, peak, total atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		c := newClient(t, sharedRedis(t), nil)
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := c.GetPermitExpirableSemaphore(name)
				for range rounds {
					id, err := s.Acquire(ctx, 10*time.Second)
					if err != nil {
						t.Errorf("Acquire: %v", err)
						return
					}
					n := holders.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					total.Add(1)
					time.Sleep(time.Millisecond)
					holders.Add(-1)
					if err := s.Release(ctx, id); err != nil {
						t.Errorf("Release: %v", err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	t.Logf("%d acquisitions, at most %d holders at once", total.Load(), peak.Load())
	if p := peak.Load(); p > k {
		t.Fatalf("%d holders at once; want at most %d", p, k)
	}
	if n := total.Load(); n != clients*goroutines*rounds {
		t.Fatalf("%d acquisitions; want %d", n, clients*goroutines*rounds)
	}
	mustAvailable(t, ctx, newClient(t, rdb, nil).GetPermitExpirableSemaphore(name), k)
	if n := rdb.Exists(ctx, suffixName(name, "timeout")).Val(); n != 0 {
		t.Fatal("permits still held after every goroutine released")
	}
}

// On a 3-master cluster, semaphores spread over every master: acquire,
// release, and a waiter woken when a lease ends. A name with an incomplete
// hash tag is refused.
func TestClusterPermitSemaphore(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	other := newClient(t, cl.Client(t), nil)
	ctx := testCtx(t, time.Minute)
	if _, err := c.GetPermitExpirableSemaphore("pool{a").AvailablePermits(ctx); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("name with an incomplete hash tag: %v; want ErrInvalidName", err)
	}
	// At least 12 names, and as many more as it takes to reach every master.
	var names []string
	masters := map[string]bool{}
	for i := 0; len(names) < 12 || len(masters) < 3; i++ {
		if i == 200 {
			t.Fatalf("200 names landed on %d masters; want 3", len(masters))
		}
		name := permitName(t, rdb) + fmt.Sprintf(":%d", i)
		names = append(names, name)
		t.Cleanup(func() { rdb.Del(context.Background(), name, suffixName(name, "timeout")) })
		node, err := rdb.MasterForKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
	}
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := c.GetPermitExpirableSemaphore(name)
			if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
				t.Errorf("%s TrySetPermits = %v, %v", name, ok, err)
				return
			}
			if _, ok, err := s.TryAcquire(ctx, 0, 400*time.Millisecond); err != nil || !ok {
				t.Errorf("%s TryAcquire = %v, %v", name, ok, err)
				return
			}
			start := time.Now()
			w := other.GetPermitExpirableSemaphore(name)
			id, ok, err := w.TryAcquire(ctx, 20*time.Second, 0)
			if err != nil || !ok {
				t.Errorf("%s waiter = %v, %v", name, ok, err)
				return
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("%s waiter acquired after %v; want when the 400ms lease ended", name, d)
			}
			if err := w.Release(ctx, id); err != nil {
				t.Errorf("%s Release: %v", name, err)
			}
			if n, err := w.AvailablePermits(ctx); err != nil || n != 1 {
				t.Errorf("%s AvailablePermits = %d, %v; want 1", name, n, err)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkPermitSemaphoreUncontended: TryAcquire + Release of one permit by
// one goroutine; round trips counted by a go-redis hook (the janitor's
// batched latch deletions included).
func BenchmarkPermitSemaphoreUncontended(b *testing.B) {
	run := func(b *testing.B, lease time.Duration) {
		_, rdb, h, admin := benchRedis(b)
		c := newClient(b, rdb, nil)
		ctx := benchCtx(b)
		s := c.GetPermitExpirableSemaphore("bench:permits")
		if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
			b.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		cycle := func() {
			id, ok, err := s.TryAcquire(ctx, 0, lease)
			if err != nil || !ok {
				b.Fatalf("TryAcquire = %v, %v", ok, err)
			}
			if err := s.Release(ctx, id); err != nil {
				b.Fatalf("Release: %v", err)
			}
		}
		cycle() // loads the scripts, dials
		b.ReportAllocs()
		rt0 := h.roundTrips()
		for b.Loop() {
			cycle()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
		keys, _ := benchKeyspace(ctx, admin)
		b.ReportMetric(float64(keys), "keys-left")
	}
	b.Run("lease", func(b *testing.B) { run(b, 10*time.Second) })
	b.Run("no-lease", func(b *testing.B) { run(b, 0) })
}

// BenchmarkPermitSemaphoreContended: BenchmarkSemaphoreContended's load (one
// permit, 8 goroutines over 4 clients, hold 20 ms) on a
// PermitExpirableSemaphore: Acquire with a 10 s lease, Release of its id.
func BenchmarkPermitSemaphoreContended(b *testing.B) {
	semContended(b, func(ctx context.Context, c *Client, name string, first bool) semWorker {
		s := c.GetPermitExpirableSemaphore(name)
		if first {
			if ok, err := s.TrySetPermits(ctx, 1); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		return func(ctx context.Context) (func(context.Context) error, error) {
			id, err := s.Acquire(ctx, 10*time.Second)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return s.Release(ctx, id) }, nil
		}
	})
}

// Waiters on three clients queue in Redis in arrival order; each Release
// wakes exactly the waiter its permit serves, the first queued, and no other
// waiter tries again (no thundering herd).
func TestPermitSemaphoreReleaseWakesOnlyTheServedWaiter(t *testing.T) {
	srv := redistest.Start(t)
	ctx := testCtx(t, 30*time.Second)
	admin := srv.Client(t)
	const name = "permits:served"
	sems, hooks := hookedClients(t, srv, 3, func(c *Client) *PermitExpirableSemaphore { return c.GetPermitExpirableSemaphore(name) })
	holder := newClient(t, srv.Client(t), nil).GetPermitExpirableSemaphore(name)
	mustTrySetPermits(t, ctx, holder, 1)
	held := mustTryAcquirePermit(t, ctx, holder, 0, 0)
	type got struct {
		i  int
		id string
	}
	order := make(chan got, len(sems))
	var dones []<-chan error
	for i, s := range sems {
		dones = append(dones, async(func() error {
			id, err := s.Acquire(ctx, 0)
			order <- got{i, id}
			return err
		}))
		eventually(t, 5*time.Second, "waiter queued", func() bool { return admin.ZCard(ctx, s.keys[3]).Val() == int64(i+1) })
	}
	tries := triesBy(hooks, "permit_acquire")
	releaser := holder
	for want := range sems {
		before := tries()
		if err := releaser.Release(ctx, held); err != nil {
			t.Fatal(err)
		}
		await(t, dones[want], wakeBound, "the first queued waiter")
		g := <-order
		if g.i != want {
			t.Fatalf("release %d served waiter %d; want %d (arrival order)", want, g.i, want)
		}
		onlyServedTried(t, "release", want, before, tries)
		releaser, held = sems[want], g.id
	}
}

// AddPermits and TrySetPermits wake the queued waiters the permits serve,
// in arrival order, and no other: one permit added wakes the oldest waiter
// only, whatever client it is on.
func TestPermitSemaphoreAddPermitsWakesOnlyTheServedWaiter(t *testing.T) {
	srv := redistest.Start(t)
	ctx := testCtx(t, 30*time.Second)
	admin := srv.Client(t)
	const name = "permits:added"
	sems, hooks := hookedClients(t, srv, 3, func(c *Client) *PermitExpirableSemaphore { return c.GetPermitExpirableSemaphore(name) })
	adder := newClient(t, srv.Client(t), nil).GetPermitExpirableSemaphore(name)
	order := make(chan int, len(sems))
	var dones []<-chan error
	for i, s := range sems {
		dones = append(dones, async(func() error {
			_, err := s.Acquire(ctx, 0)
			order <- i
			return err
		}))
		eventually(t, 5*time.Second, "waiter queued", func() bool { return admin.ZCard(ctx, s.keys[3]).Val() == int64(i+1) })
	}
	tries := triesBy(hooks, "permit_acquire")
	for want := range sems {
		before := tries()
		if want == 0 {
			if ok, err := adder.TrySetPermits(ctx, 1); err != nil || !ok {
				t.Fatalf("TrySetPermits(1) = %v, %v; want true", ok, err)
			}
		} else if _, err := adder.AddPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		await(t, dones[want], wakeBound, "the first queued waiter")
		if g := <-order; g != want {
			t.Fatalf("permit %d served waiter %d; want %d (arrival order)", want, g, want)
		}
		onlyServedTried(t, "permit", want, before, tries)
	}
}
