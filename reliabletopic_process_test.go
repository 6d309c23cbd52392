package redisson

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// rtopicWorkerEnv makes the test binary a reliable topic subscriber (see
// runReliableSubscriber) instead of running tests: "<addr>|<name>|<id>".
const rtopicWorkerEnv = "REDISSON_TEST_RTOPIC"

func init() {
	if spec := os.Getenv(rtopicWorkerEnv); spec != "" {
		os.Exit(runReliableSubscriber(spec))
	}
}

// runReliableSubscriber subscribes to the topic with the given id and
// prints "ready new" or "ready resumed", then "got N" for each message
// handled, until it is killed.
func runReliableSubscriber(spec string) int {
	f := strings.Split(spec, "|")
	rdb := redis.NewClient(&redis.Options{Addr: f[0]})
	c, err := New(rdb, nil)
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	topic := GetReliableTopic[int](c, f[1])
	ready := make(chan struct{}) // no "got" line before the "ready" one
	s, err := topic.Subscribe(context.Background(), func(v int) {
		<-ready
		fmt.Println("got", v)
		time.Sleep(2 * time.Millisecond) // so that a kill lands between handling and acknowledgement
	},
		WithSubscriberID(f[2]), WithSubscriberTimeout(time.Minute))
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	if s.Resumed() {
		fmt.Println("ready resumed")
	} else {
		fmt.Println("ready new")
	}
	close(ready)
	select {}
}

// A subscriber process killed with SIGKILL and restarted under its id
// within its timeout receives every message published while it was down:
// the recorded history of both processes holds every message, each
// process's in publish order, a message handled but not acknowledged when
// the first died being the only repeats.
func TestReliableTopicProcessKilledResumes(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 2*time.Minute)
	name := reliableName(t, rdb)
	topic := GetReliableTopic[int](c, name)
	spec := rtopicWorkerEnv + "=" + srv.Addr() + "|" + name + "|proc-subscriber"

	type line struct {
		run int
		v   int
	}
	var history []line // every "got N" line of both processes, in order
	start := func(run int, want string) (*bufio.Scanner, func()) {
		cmd, _, out := redistest.Reexec(t, spec)
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != want {
			t.Fatalf("run %d: first line %q, want %q", run, sc.Text(), want)
		}
		return sc, func() { cmd.Process.Kill(); cmd.Wait() }
	}
	// readUntil records the process's lines until it reports v.
	readUntil := func(run int, sc *bufio.Scanner, v int) {
		for sc.Scan() {
			n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "got "))
			if err != nil {
				t.Fatalf("run %d: line %q", run, sc.Text())
			}
			history = append(history, line{run, n})
			if n >= v {
				return
			}
		}
		t.Fatalf("run %d: output ended before message %d", run, v)
	}

	sc, kill := start(1, "ready new")
	for i := range 50 {
		if _, err := topic.Publish(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	readUntil(1, sc, 20+int(time.Now().UnixNano()%20)) // killed at a random point
	kill()
	for sc.Scan() { // what it printed before it died
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "got "))
		if err == nil {
			history = append(history, line{1, n})
		}
	}
	for i := 50; i < 150; i++ { // published while it is down
		if n, err := topic.Publish(ctx, i); err != nil || n != 1 {
			t.Fatalf("Publish while down = %d, %v; want 1 (the subscriber keeps its place)", n, err)
		}
	}
	sc, kill = start(2, "ready resumed")
	defer kill()
	for i := 150; i < 200; i++ {
		if _, err := topic.Publish(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	readUntil(2, sc, 199)

	seen := make(map[int]int)
	last := map[int]int{1: -1, 2: -1}
	for _, l := range history {
		if l.v <= last[l.run] {
			t.Fatalf("run %d: %d after %d, want publish order", l.run, l.v, last[l.run])
		}
		last[l.run] = l.v
		seen[l.v]++
	}
	repeats := 0
	for i := range 200 {
		if seen[i] == 0 {
			t.Fatalf("message %d never handled; history %v", i, history)
		}
		repeats += seen[i] - 1
	}
	t.Logf("run 1 handled up to %d before SIGKILL; %d messages handled twice (handled, not yet acknowledged)", last[1], repeats)
}
