package redisson

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/childproc"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// rtProcEnv makes the test binary a reader process of
// TestReadThroughOneLoadAcrossProcesses (see runRTProcess) instead of
// running tests: "<redis addr>|<map kind>|<name>|<goroutines>|<start unix ns>|<out file>".
const rtProcEnv = "REDISSON_TEST_RTPROC"

func init() {
	if spec := os.Getenv(rtProcEnv); spec != "" {
		os.Exit(runRTProcess(spec))
	}
}

// rtLoadTime is how long the process test's loader takes.
const rtLoadTime = 200 * time.Millisecond

// runRTProcess is a child of the process test: it opens the map with a
// loader that counts its calls per key in Redis (INCR rtcount:<name>:<key>)
// and takes rtLoadTime, warms its connections up on a key of its own, then
// at the start time reads the key "hot" from every goroutine at once and
// writes one line per read: "<latency ns> <error or ok>".
func runRTProcess(spec string) int {
	f := strings.SplitN(spec, "|", 6)
	addr, kind, name, out := f[0], f[1], f[2], f[5]
	goroutines, _ := strconv.Atoi(f[3])
	startNS, _ := strconv.ParseInt(f[4], 10, 64)
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	c, err := New(rdb, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	rt := WithReadThrough(ReadThrough[string, string]{Load: func(ctx context.Context, key string) (string, error) {
		began := time.Now()
		if err := rdb.Incr(ctx, "rtcount:"+name+":"+key).Err(); err != nil {
			return "", err
		}
		time.Sleep(rtLoadTime)
		if key == "hot" { // when the load ran, for the test's breakdown
			rdb.Set(ctx, "rtload:"+name, fmt.Sprintf("%d %d", began.UnixNano(), time.Now().UnixNano()), 0)
		}
		return "value of " + key, nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var get func(context.Context, string) (string, bool, error)
	switch kind {
	case "lc":
		lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{}, rt)
		defer lc.Close()
		get = lc.Get
	case "mc":
		get = GetMapCache[string, string](c, name, rt).Get
	default: // "floor": the same wake without the library (see rtFloor)
		get = rtFloor(ctx, rdb, name, kind == "floor0", startNS)
	}
	if _, _, err := get(ctx, "warm-"+strconv.Itoa(os.Getpid())); err != nil {
		fmt.Fprintln(os.Stderr, "warm-up:", err)
		return 1
	}
	time.Sleep(time.Until(time.Unix(0, startNS)))
	lines := make([]string, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			v, ok, err := get(ctx, "hot")
			res := "ok"
			switch {
			case err != nil:
				res = strings.ReplaceAll(err.Error(), " ", "_")
			case !ok || v != "value of hot":
				res = fmt.Sprintf("wrong:%q:%v", v, ok)
			}
			end := time.Now()
			lines[i] = fmt.Sprintf("%d %s %d %d", end.Sub(start).Nanoseconds(), res, start.UnixNano(), end.UnixNano())
		}()
	}
	wg.Wait()
	if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestReadThroughOneLoadAcrossProcesses: 10,000 concurrent misses of one key
// from 5 clients in separate OS processes (2,000 goroutines each) call the
// loader exactly once (counted in Redis), every read returns the loaded
// value, and the reads return within the loader's time plus a bound far
// above a round trip (the p50, p99 and max are logged, with where the time
// went and the same numbers for "floor": a plain pub/sub wake of one
// channel per process, without the library, on the same machine).
func TestReadThroughOneLoadAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for _, kind := range []string{"lc", "mc", "floor"} {
		t.Run(kind, func(t *testing.T) {
			ctx := testCtx(t, 2*time.Minute)
			name := "rt-proc-" + kind
			const procs, goroutines = 5, 2000
			dir := t.TempDir()
			start := time.Now().Add(3 * time.Second)
			var waits []func() error
			for p := range procs {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				pk := kind
				if kind == "floor" && p == 0 {
					pk = "floor0"
				}
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%s|%d|%d|%s", rtProcEnv, srv.Addr(), pk, name,
					goroutines, start.UnixNano(), filepath.Join(dir, strconv.Itoa(p))))
				cmd.Stderr = os.Stderr
				wait, err := childproc.Start(cmd)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
				waits = append(waits, wait)
			}
			for p, wait := range waits {
				if err := wait(); err != nil {
					t.Fatalf("process %d: %v", p, err)
				}
			}
			var lat, wake []time.Duration
			first, last := int64(1<<62), int64(0)
			var loadStart, loadEnd int64
			if spec, err := rdb.Get(ctx, "rtload:"+name).Result(); err != nil {
				t.Fatal(err)
			} else {
				fmt.Sscanf(spec, "%d %d", &loadStart, &loadEnd)
			}
			for p := range procs {
				f, err := os.Open(filepath.Join(dir, strconv.Itoa(p)))
				if err != nil {
					t.Fatal(err)
				}
				sc := bufio.NewScanner(f)
				for sc.Scan() {
					var d, began, ended int64
					var res string
					fmt.Sscanf(sc.Text(), "%d %s %d %d", &d, &res, &began, &ended)
					if res != "ok" {
						t.Fatalf("process %d: a read returned %s", p, res)
					}
					lat = append(lat, time.Duration(d))
					wake = append(wake, time.Duration(ended-loadEnd))
					first, last = min(first, began), max(last, began)
				}
				f.Close()
			}
			if len(lat) != procs*goroutines {
				t.Fatalf("%d reads recorded, want %d", len(lat), procs*goroutines)
			}
			if n, err := rdb.Get(ctx, "rtcount:"+name+":hot").Int(); err != nil || n != 1 {
				t.Fatalf("loader called %d times (%v) for 10,000 concurrent misses, want 1", n, err)
			}
			slices.Sort(lat)
			slices.Sort(wake)
			p50, p99, top := lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
			rtt := time.Now()
			rdb.Ping(ctx)
			t.Logf("%s: 10,000 reads, loader %v: p50 %v, p99 %v, max %v (a PING now: %v)", kind, rtLoadTime,
				p50, p99, top, time.Since(rtt))
			// Where the time went: the reads' starts spread over [first,
			// last]; the load began some time after the first; a read
			// returned some time after the load's end.
			t.Logf("%s: reads started over %v; the load began %v after the first; after the load's end the reads returned p50 %v, p99 %v, max %v",
				kind, time.Duration(last-first), time.Duration(loadStart-first),
				wake[len(wake)/2], wake[len(wake)*99/100], wake[len(wake)-1])
			if kind != "floor" && p99 > rtLoadTime+5*time.Second { // the floor measures the machine only
				t.Fatalf("p99 %v: waiters did not return near the loader's time %v", p99, rtLoadTime)
			}
		})
	}
}

// rtFloor is the floor the process test compares the library with: the
// reads of "hot" wait on one channel per process, closed by a plain go-redis
// subscription's message, which the process "loader" (the first) publishes
// rtLoadTime after the start, counting itself as the loader's one call. No
// flight, lease or read: what is left is the machine's scheduling of the
// goroutines and the message's delivery.
func rtFloor(ctx context.Context, rdb *redis.Client, name string, loader bool, startNS int64) func(context.Context, string) (string, bool, error) {
	ps := rdb.Subscribe(ctx, "rtfloor:"+name)
	if _, err := ps.Receive(ctx); err != nil {
		panic(err)
	}
	woken := make(chan struct{})
	go func() {
		<-ps.Channel()
		close(woken)
	}()
	if loader {
		go func() {
			time.Sleep(time.Until(time.Unix(0, startNS)))
			began := time.Now()
			rdb.Incr(ctx, "rtcount:"+name+":hot")
			time.Sleep(rtLoadTime)
			rdb.Set(ctx, "rtload:"+name, fmt.Sprintf("%d %d", began.UnixNano(), time.Now().UnixNano()), 0)
			rdb.Publish(ctx, "rtfloor:"+name, "hot")
		}()
	}
	return func(ctx context.Context, key string) (string, bool, error) {
		if key != "hot" {
			return "value of " + key, true, nil
		}
		select {
		case <-woken:
			return "value of hot", true, nil
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
	}
}
