package redisson

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// classCall is one object's call in the error-class tables: every object
// must give the same sentinel for the same cause.
type classCall struct {
	name string
	// plant makes the object's key hold a value of another type.
	plant func(ctx context.Context, rdb redis.UniversalClient, name string) error
	call  func(ctx context.Context, c *Client, name string) error
}

func plantString(ctx context.Context, rdb redis.UniversalClient, name string) error {
	return rdb.Set(ctx, name, "not mine", 0).Err()
}

func plantList(ctx context.Context, rdb redis.UniversalClient, name string) error {
	return rdb.RPush(ctx, name, "not mine").Err()
}

var classCalls = []classCall{
	{"Lock.TryLock", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetLock(name).TryLock(ctx, 0, time.Minute)
		return err
	}},
	{"Lock.TryLock/wait", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetLock(name).TryLock(ctx, time.Second, time.Minute)
		return err
	}},
	{"FairLock.TryLock", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetFairLock(name).TryLock(ctx, 0, time.Minute)
		return err
	}},
	{"BlockingQueue.Take", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := GetBlockingQueue[string](c, name).Take(ctx)
		return err
	}},
	{"BlockingQueue.Poll", plantString, func(ctx context.Context, c *Client, name string) error {
		_, _, err := GetBlockingQueue[string](c, name).Poll(ctx, time.Second)
		return err
	}},
	{"Queue.Offer", plantString, func(ctx context.Context, c *Client, name string) error {
		return GetQueue[string](c, name).Offer(ctx, "x")
	}},
	{"Semaphore.TryAcquire", plantList, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetSemaphore(name).TryAcquire(ctx, 1, 0)
		return err
	}},
	{"Semaphore.TrySetPermits", plantList, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetSemaphore(name).TrySetPermits(ctx, 3)
		return err
	}},
	{"CountDownLatch.Count", plantList, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetCountDownLatch(name).Count(ctx)
		return err
	}},
	{"AtomicLong.Get", plantList, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetAtomicLong(name).Get(ctx)
		return err
	}},
	{"Map.Get", plantString, func(ctx context.Context, c *Client, name string) error {
		_, _, err := GetMap[string, string](c, name).Get(ctx, "k")
		return err
	}},
	{"Map.Put", plantString, func(ctx context.Context, c *Client, name string) error {
		_, _, err := GetMap[string, string](c, name).Put(ctx, "k", "v")
		return err
	}},
	{"RateLimiter.TrySetRate", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetRateLimiter(name).TrySetRate(ctx, Overall, 10, time.Second)
		return err
	}},
	{"Bucket.Get", plantList, func(ctx context.Context, c *Client, name string) error {
		_, _, err := GetBucket[string](c, name).Get(ctx)
		return err
	}},
	{"Bucket.Set", plantList, func(ctx context.Context, c *Client, name string) error {
		return GetBucket[string](c, name).Set(ctx, "v")
	}},
	{"ReadWriteLock.WriteLock.TryLock", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetReadWriteLock(name).WriteLock().TryLock(ctx, 0, time.Minute)
		return err
	}},
	{"PermitExpirableSemaphore.TryAcquire", plantList, func(ctx context.Context, c *Client, name string) error {
		_, _, err := c.GetPermitExpirableSemaphore(name).TryAcquire(ctx, 0, time.Minute)
		return err
	}},
	{"CountDownLatch.TrySetCount", plantList, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetCountDownLatch(name).TrySetCount(ctx, 2)
		return err
	}},
	{"IdGenerator.NextID", plantList, func(ctx context.Context, c *Client, name string) error {
		_, err := c.GetIdGenerator(name).NextID(ctx)
		return err
	}},
	{"List.Add", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := GetList[string](c, name).Add(ctx, "v")
		return err
	}},
	{"Set.Add", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := GetSet[string](c, name).Add(ctx, "v")
		return err
	}},
	{"SortedSet.Add", plantString, func(ctx context.Context, c *Client, name string) error {
		_, err := GetSortedSet[string](c, name).Add(ctx, 1, "v")
		return err
	}},
	{"MapCache.Put", plantString, func(ctx context.Context, c *Client, name string) error {
		_, _, err := GetMapCache[string, string](c, name).Put(ctx, "k", "v")
		return err
	}},
	{"BloomFilter.TryInit", plantList, func(ctx context.Context, c *Client, name string) error {
		_, err := GetBloomFilter[string](c, name).TryInit(ctx, 100, 0.01)
		return err
	}},
}

// scriptLeak matches what a script error says of the script: its SHA and
// line, which no error of this package may show.
var scriptLeak = regexp.MustCompile(`f_[0-9a-f]{40}|@user_script|Error running script|[0-9a-f]{40}`)

// checkClass runs every classCall on c and wants each error to match
// want, with a text free of the script's SHA and line.
func checkClass(t *testing.T, c *Client, rdb redis.UniversalClient, want error, plant bool) {
	t.Helper()
	for _, tc := range classCalls {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			name := uniqueName(t, rdb)
			if plant {
				if err := tc.plant(ctx, rdb, name); err != nil {
					t.Fatalf("plant: %v", err)
				}
			}
			err := tc.call(ctx, c, name)
			if !errors.Is(err, want) {
				t.Fatalf("got %v, want an error matching %v", err, want)
			}
			if scriptLeak.MatchString(err.Error()) {
				t.Errorf("error %q shows the script", err)
			}
			if errors.Unwrap(err) == nil {
				t.Errorf("error %q wraps nothing: the original error is lost", err)
			}
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name the object %q", err, name)
			}
		})
	}
}

func TestErrAuthEveryObject(t *testing.T) {
	srv := redistest.Start(t, "--requirepass", "s3cret")
	good := srv.Client(t, func(o *redis.Options) { o.Password = "s3cret" })
	for _, pw := range []string{"wrong", ""} {
		t.Run("password="+pw, func(t *testing.T) {
			bad := srv.Client(t, func(o *redis.Options) { o.Password = pw; o.MaxRetries = -1 })
			c := newClient(t, bad, nil)
			checkClass(t, c, good, ErrAuth, false)
		})
	}
}

// closedPort returns an address of 127.0.0.1 that nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestErrUnreachableEveryObject(t *testing.T) {
	// PoolSize above the failures the table makes: go-redis starts a
	// redial goroutine after PoolSize failed dials, which outlives Close by
	// up to a second.
	rdb := redis.NewClient(&redis.Options{Addr: closedPort(t), MaxRetries: -1, DialTimeout: time.Second, PoolSize: 10000, DialerRetries: 1})
	t.Cleanup(func() { rdb.Close() })
	c := newClient(t, rdb, nil)
	checkClass(t, c, rdb, ErrUnreachable, false)
	if mayHaveRun(c.GetLock("x").wrap(rdb.Ping(context.Background()).Err())) {
		t.Error("mayHaveRun(refused dial) = true, want false: nothing was sent")
	}
}

func TestErrWrongTypeEveryObject(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	checkClass(t, c, rdb, ErrWrongType, true)
}

func TestErrUnsupportedEveryObject(t *testing.T) {
	// A server whose EVALSHA is renamed away: every script call must say
	// which command is missing, not show Redis's reply.
	srv := redistest.Start(t, "--rename-command", "evalsha", "")
	rdb := srv.Client(t)
	c := newClient(t, rdb, nil)
	// The calls that send plain commands, no script (BlockingQueue's takes
	// lack BLMOVE in TestUnsupportedFeatures).
	plain := map[string]bool{"Bucket.Get": true, "Bucket.Set": true, "AtomicLong.Get": true, "CountDownLatch.Count": true,
		"Map.Get": true, "Queue.Offer": true, "BlockingQueue.Take": true, "BlockingQueue.Poll": true,
		"List.Add": true, "Set.Add": true, "SortedSet.Add": true}
	for _, tc := range classCalls {
		if plain[tc.name] {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			err := tc.call(ctx, c, uniqueName(t, rdb))
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "EVALSHA") {
				t.Fatalf("got %v, want ErrUnsupported naming EVALSHA", err)
			}
		})
	}
}

func TestClassifyKeepsInFlightErrors(t *testing.T) {
	// A read timeout on a call in flight may have run: it is not
	// ErrUnreachable, and mayHaveRun says so.
	inflight := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout")}
	if err := classify(inflight); errors.Is(err, ErrUnreachable) || !mayHaveRun(err) {
		t.Errorf("classify(read timeout) = %v (mayHaveRun %v), want it unchanged and maybe run", err, mayHaveRun(err))
	}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	if err := classify(dial); !errors.Is(err, ErrUnreachable) || mayHaveRun(err) {
		t.Errorf("classify(refused dial) = %v (mayHaveRun %v), want ErrUnreachable, not run", err, mayHaveRun(err))
	}
}

func TestUnknownCommandNames(t *testing.T) {
	for msg, want := range map[string]string{
		"ERR unknown command 'blmove', with args beginning with: 'a' ":  "the server lacks command BLMOVE",
		"ERR unknown command `blmove`, with args beginning with: `a`, ": "the server lacks command BLMOVE",
		"ERR unknown subcommand 'no-evict'. Try CLIENT HELP.":           "the server lacks subcommand NO-EVICT",
		"ERR Unknown Redis command called from script script: f_0123":   "the server lacks a command a script calls",
	} {
		if got, ok := unknownCommand(msg); !ok || got != want {
			t.Errorf("unknownCommand(%q) = %q, %v; want %q", msg, got, ok, want)
		}
	}
	if _, ok := unknownCommand("ERR wrong number of arguments for 'get' command"); ok {
		t.Error("an arity error read as an unknown command")
	}
}
