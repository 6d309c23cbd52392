package redisson

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The fuzz targets feed the public calls of Lock, Semaphore, CountDownLatch
// and PermitExpirableSemaphore names (empty, with braces, huge, unicode),
// durations (negative, huge) and counts (0, negative, huge) on a private
// server, and assert that every call either succeeds or returns one of the
// documented sentinel errors (or the context's, whose 300ms bounds every
// wait): never a panic, never an unclassified error. The seed corpus runs
// with the normal suite; `go test -fuzz FuzzLockInputs` explores further.

// documented are the sentinels a call on valid-looking input may return.
var documented = []error{
	ErrEmptyName, ErrInvalidName, ErrNegativeDuration, ErrInvalidPermits, ErrInvalidCount,
	ErrUnknownPermit, ErrNotHeld, ErrLeaseLost, ErrWrongType,
	context.DeadlineExceeded, context.Canceled,
}

// checkDocumented fails the fuzz input when err is not nil and matches no
// documented sentinel.
func checkDocumented(t *testing.T, call string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range documented {
		if errors.Is(err, s) {
			return
		}
	}
	t.Errorf("%s: undocumented error %v (%T)", call, err, err)
}

// fuzzClient returns a Client on a private server for f's inputs.
func fuzzClient(f *testing.F) (*Client, *redis.Client) {
	srv := redistest.Start(f)
	rdb := srv.Client(f)
	return newClient(f, rdb, &Options{WatchdogTimeout: time.Second}), rdb
}

// fuzzName keeps names from the corpus usable as keys: the name itself
// (empty stays empty), as long as Redis accepts it.
func fuzzName(name string) string { return name }

var seedNames = []string{"", "lock", "{", "}", "{}", "a{b}c", "{{x}}", "名前🔒", "\x00\xff", strings.Repeat("n", 1<<16), " "}

var seedDurations = []int64{0, 1, -1, int64(time.Millisecond), int64(50 * time.Millisecond), int64(time.Hour), math.MaxInt64, math.MinInt64}

var seedCounts = []int64{0, 1, -1, 2, 1 << 40, math.MaxInt64, math.MinInt64}

func fuzzCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func FuzzLockInputs(f *testing.F) {
	for i, name := range seedNames {
		f.Add(name, seedDurations[i%len(seedDurations)], seedDurations[(i+3)%len(seedDurations)])
	}
	c, _ := fuzzClient(f)
	f.Fuzz(func(t *testing.T, name string, wait, lease int64) {
		ctx := fuzzCtx(t)
		l := c.GetLock(fuzzName(name))
		ok, err := l.TryLock(ctx, time.Duration(wait), time.Duration(lease))
		checkDocumented(t, "TryLock", err)
		if ok {
			if l.Token() <= 0 {
				t.Errorf("TryLock held with token %d", l.Token())
			}
			_, err = l.RemainingLease(ctx)
			checkDocumented(t, "RemainingLease", err)
			checkDocumented(t, "Unlock", l.Unlock(context.Background()))
		}
		_, err = l.IsLocked(ctx)
		checkDocumented(t, "IsLocked", err)
		_, err = l.HoldCount(ctx)
		checkDocumented(t, "HoldCount", err)
		if err := l.Unlock(ctx); err == nil {
			t.Error("Unlock of a lock not held succeeded")
		} else {
			checkDocumented(t, "Unlock", err)
		}
	})
}

func FuzzSemaphoreInputs(f *testing.F) {
	for i, name := range seedNames {
		f.Add(name, seedCounts[i%len(seedCounts)], seedDurations[i%len(seedDurations)])
	}
	c, _ := fuzzClient(f)
	f.Fuzz(func(t *testing.T, name string, n, wait int64) {
		ctx := fuzzCtx(t)
		s := c.GetSemaphore(fuzzName(name))
		_, err := s.TrySetPermits(ctx, n)
		checkDocumented(t, "TrySetPermits", err)
		ok, err := s.TryAcquire(ctx, n, time.Duration(wait))
		checkDocumented(t, "TryAcquire", err)
		if ok {
			checkDocumented(t, "Release", s.Release(ctx, n))
		}
		checkDocumented(t, "AddPermits", s.AddPermits(ctx, n))
		_, err = s.AvailablePermits(ctx)
		checkDocumented(t, "AvailablePermits", err)
		_, err = s.DrainPermits(ctx)
		checkDocumented(t, "DrainPermits", err)
		_, err = s.Delete(ctx)
		checkDocumented(t, "Delete", err)
	})
}

func FuzzCountDownLatchInputs(f *testing.F) {
	for i, name := range seedNames {
		f.Add(name, seedCounts[i%len(seedCounts)], seedDurations[i%len(seedDurations)])
	}
	c, _ := fuzzClient(f)
	f.Fuzz(func(t *testing.T, name string, n, wait int64) {
		ctx := fuzzCtx(t)
		l := c.GetCountDownLatch(fuzzName(name))
		_, err := l.TrySetCount(ctx, n)
		checkDocumented(t, "TrySetCount", err)
		checkDocumented(t, "CountDown", l.CountDown(ctx))
		_, err = l.Count(ctx)
		checkDocumented(t, "Count", err)
		_, err = l.TryAwait(ctx, time.Duration(wait))
		checkDocumented(t, "TryAwait", err)
		_, err = l.Delete(ctx)
		checkDocumented(t, "Delete", err)
	})
}

func FuzzPermitExpirableSemaphoreInputs(f *testing.F) {
	for i, name := range seedNames {
		f.Add(name, seedCounts[i%len(seedCounts)], seedDurations[i%len(seedDurations)], seedDurations[(i+2)%len(seedDurations)], []string{"", "0123456789abcdef0123456789abcdef", "zz", "名"}[i%4])
	}
	c, _ := fuzzClient(f)
	f.Fuzz(func(t *testing.T, name string, n, wait, lease int64, permit string) {
		ctx := fuzzCtx(t)
		s := c.GetPermitExpirableSemaphore(fuzzName(name))
		_, err := s.TrySetPermits(ctx, n)
		checkDocumented(t, "TrySetPermits", err)
		_, err = s.AddPermits(ctx, n)
		checkDocumented(t, "AddPermits", err)
		id, ok, err := s.TryAcquire(ctx, time.Duration(wait), time.Duration(lease))
		checkDocumented(t, "TryAcquire", err)
		if ok {
			_, err = s.UpdateLease(ctx, id, time.Duration(lease))
			checkDocumented(t, "UpdateLease", err)
			checkDocumented(t, "Release", s.Release(ctx, id))
		}
		_, err = s.UpdateLease(ctx, permit, time.Duration(lease))
		checkDocumented(t, "UpdateLease(foreign id)", err)
		checkDocumented(t, "Release(foreign id)", s.Release(ctx, permit))
		_, err = s.AvailablePermits(ctx)
		checkDocumented(t, "AvailablePermits", err)
		_, err = s.Delete(ctx)
		checkDocumented(t, "Delete", err)
	})
}

// Adding permits past the int64 range is refused with ErrInvalidPermits and
// leaves the count unchanged (found by the fuzz seeds: it used to surface
// as Redis's raw "increment or decrement would overflow").
func TestPermitsOverflowIsInvalidPermits(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 10*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name, name+":p") })
	s := c.GetSemaphore(name)
	if err := s.AddPermits(ctx, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPermits(ctx, 1); !errors.Is(err, ErrInvalidPermits) {
		t.Fatalf("Semaphore.AddPermits past MaxInt64 = %v; want ErrInvalidPermits", err)
	}
	if err := s.Release(ctx, 1); !errors.Is(err, ErrInvalidPermits) {
		t.Fatalf("Semaphore.Release past MaxInt64 = %v; want ErrInvalidPermits", err)
	}
	if n, err := s.AvailablePermits(ctx); err != nil || n != math.MaxInt64 {
		t.Fatalf("AvailablePermits = %d, %v; want MaxInt64, unchanged", n, err)
	}
	p := c.GetPermitExpirableSemaphore(name + ":p")
	if _, err := p.AddPermits(ctx, math.MinInt64); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AddPermits(ctx, -1); !errors.Is(err, ErrInvalidPermits) {
		t.Fatalf("PermitExpirableSemaphore.AddPermits past MinInt64 = %v; want ErrInvalidPermits", err)
	}
	if n, err := p.AvailablePermits(ctx); err != nil || n != math.MinInt64 {
		t.Fatalf("AvailablePermits = %d, %v; want MinInt64, unchanged", n, err)
	}
}
