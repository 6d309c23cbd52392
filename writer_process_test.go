package redisson

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/childproc"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// wbProcEnv makes the test binary a writer process of
// TestWriteBehindAcrossProcessExit (see runWBProcess):
// "<redis addr>|<kind lc or mc>|<name>|<keys>|<exit: close or hang>|<done file>".
const wbProcEnv = "REDISSON_TEST_WBPROC"

func init() {
	if spec := os.Getenv(wbProcEnv); spec != "" {
		os.Exit(runWBProcess(spec))
	}
}

// runWBProcess writes keys 0..n-1 three times each (values r0, r1, r2) to
// a map with a write-behind Writer whose source of truth is the Redis hash
// sot:<name> (each Write call also adds its key count to sotcount:<name>),
// with a Delay of an hour and batches larger than n: nothing reaches the
// Writer before the exit. Then it closes the Client ("close") or writes
// the done file and waits to be killed ("hang").
func runWBProcess(spec string) int {
	f := strings.SplitN(spec, "|", 6)
	addr, kind, name, exit, done := f[0], f[1], f[2], f[4], f[5]
	n, _ := strconv.Atoi(f[3])
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	c, err := New(rdb, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w := Writer[string, string]{
		Write: func(ctx context.Context, m map[string]string) error {
			args := make([]any, 0, 2*len(m))
			for k, v := range m {
				args = append(args, k, v)
			}
			if err := rdb.HSet(ctx, "sot:"+name, args...).Err(); err != nil {
				return err
			}
			return rdb.IncrBy(ctx, "sotcount:"+name, int64(len(m))).Err()
		},
		Delete: func(ctx context.Context, keys []string) error { return rdb.HDel(ctx, "sot:"+name, keys...).Err() },
	}
	opt := WithWriteBehind(w, WriteBehind{Delay: time.Hour, BatchSize: 10 * n, QueueSize: 10 * n})
	put := GetMapCache[string, string](c, name, opt).FastPut
	if kind == "lc" {
		put = GetLocalCachedMap[string, string](c, name, LocalCacheOptions{}, opt).FastPut
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for r := range 3 {
		for i := range n {
			if _, err := put(ctx, strconv.Itoa(i), "r"+strconv.Itoa(r)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	if exit == "close" {
		c.Close()
		return 0
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	time.Sleep(time.Minute)
	return 1
}

// TestWriteBehindAcrossProcessExit: a process that wrote 3 x 2,000 writes
// behind a Delay of an hour and then closed its Client (a graceful
// shutdown) handed every key's latest value to the Writer, coalesced to
// one write per key (sotcount is 2,000); a process killed with SIGKILL
// instead lost its whole queue (the source of truth has nothing) while the
// map in Redis has every write.
func TestWriteBehindAcrossProcessExit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	const n = 2000
	for _, kind := range []string{"lc", "mc"} {
		for _, exit := range []string{"close", "hang"} {
			t.Run(kind+"-"+exit, func(t *testing.T) {
				ctx := testCtx(t, 2*time.Minute)
				name := "wb-proc-" + kind + "-" + exit
				done := filepath.Join(t.TempDir(), "done")
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%s|%d|%s|%s", wbProcEnv, srv.Addr(), kind, name, n, exit, done))
				cmd.Stderr = os.Stderr
				wait, err := childproc.Start(cmd)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
				if exit == "hang" {
					for {
						if _, err := os.Stat(done); err == nil {
							break
						}
						if ctx.Err() != nil {
							t.Fatal("the process did not finish its writes")
						}
						time.Sleep(10 * time.Millisecond)
					}
					_ = cmd.Process.Signal(syscall.SIGKILL)
					_ = wait()
				} else if err := wait(); err != nil {
					t.Fatalf("process: %v", err)
				}
				if m, err := rdb.HLen(ctx, name).Result(); err != nil || m != n {
					t.Fatalf("the map has %d entries (%v), want %d", m, err, n)
				}
				sot, err := rdb.HGetAll(ctx, "sot:"+name).Result()
				if err != nil {
					t.Fatal(err)
				}
				count, _ := rdb.Get(ctx, "sotcount:"+name).Int()
				if exit == "hang" {
					if len(sot) != 0 || count != 0 {
						t.Fatalf("killed process: source has %d keys (%d written), want 0: the queue dies with it", len(sot), count)
					}
					t.Logf("SIGKILL lost the %d queued keys, as documented; the map holds them", n)
					return
				}
				if len(sot) != n || count != n {
					t.Fatalf("closed process: source has %d keys, %d written; want %d, %d", len(sot), count, n, n)
				}
				for k, v := range sot {
					if v != "r2" {
						t.Fatalf("source key %s = %q, want the latest, r2", k, v)
					}
				}
			})
		}
	}
}
