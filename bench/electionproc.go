package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// The election scenario's candidates run in processes of their own (this
// binary, re-run with -election-candidate "addr|name|lease|id"), so that a
// leader can be killed with SIGKILL or stalled with SIGSTOP as a crashed or
// frozen service would be.

// fenceAct is the leader's act: a write to a resource that refuses a term
// lower than the highest it has seen (the use Leadership.Term is for).
var fenceAct = redis.NewScript(`local seen = tonumber(redis.call('get', KEYS[1]) or '0')
if tonumber(ARGV[1]) < seen then return 0 end
redis.call('set', KEYS[1], ARGV[1])
return 1`)

// actEvery is how often a leader acts while it leads.
const actEvery = 5 * time.Millisecond

// electionCandidateMain is a candidate process. It prints "ready", then
// campaigns again and again; while it leads it acts every actEvery, each
// act checked with Leadership.Err first. One line per event on stdout
// (times in Unix ns, this machine's clock):
//
//	lead TERM T              Campaign returned at T
//	act TERM T               the term's first act, accepted by the fence, done at T
//	refused TERM T           an act the fence refused (a newer term wrote first)
//	end TERM T CAUSE         Err reported the end of the term at T
//	resign TERM INVOKE RET   Resign, asked for by the line "resign" on stdin
//	err MSG                  a Campaign failed
//
// It exits when stdin closes.
func electionCandidateMain(spec string) int {
	f := strings.Split(spec, "|")
	if len(f) != 4 {
		fmt.Fprintf(os.Stderr, "bench: -election-candidate: want addr|name|lease|id, got %q\n", spec)
		return 2
	}
	lease, err := time.ParseDuration(f[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -election-candidate:", err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: f[0]})
	c, err := redisson.New(rdb, &redisson.Options{WatchdogTimeout: lease, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -election-candidate:", err)
		return 1
	}
	e := c.GetElection(f[1])
	fence := []string{f[1] + ":fence"}
	w := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(w, format+"\n", args...)
		w.Flush()
		mu.Unlock()
	}
	resign := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "resign" {
				select {
				case resign <- struct{}{}:
				default:
				}
			}
		}
		os.Exit(0) // the suite is done with this candidate
	}()
	say("ready")
	ctx := context.Background()
	now := func() int64 { return time.Now().UnixNano() }
	for {
		lead, err := e.Campaign(ctx, f[3])
		if err != nil {
			say("err %s", strings.ReplaceAll(err.Error(), "\n", " "))
			time.Sleep(10 * time.Millisecond)
			continue
		}
		select {
		case <-resign: // asked of an earlier term
		default:
		}
		term := lead.Term()
		say("lead %d %d", term, now())
		first := true
		tick := time.NewTicker(actEvery)
	leading:
		for {
			if err := lead.Err(); err != nil {
				say("end %d %d %s", term, now(), strings.ReplaceAll(err.Error(), " ", "_"))
				break
			}
			ok, err := fenceAct.Run(ctx, rdb, fence, term).Int()
			switch {
			case err != nil:
			case ok == 1 && first:
				say("act %d %d", term, now())
				first = false
			case ok == 0:
				say("refused %d %d", term, now())
			}
			select {
			case <-resign:
				inv := now()
				err := lead.Resign(ctx)
				say("resign %d %d %d %v", term, inv, now(), err == nil)
				break leading
			case <-tick.C:
			}
		}
		tick.Stop()
	}
}

// candEvent is one line of a candidate process.
type candEvent struct {
	id, what string
	term     int64
	t, t2    int64
}

// candProc is one candidate process.
type candProc struct {
	id   string
	cmd  *exec.Cmd
	in   io.WriteCloser
	done chan struct{}
}

// startCandidate starts candidate id and returns once it printed "ready";
// its later lines go to events.
func startCandidate(addr, name string, lease time.Duration, id string, events chan<- candEvent) (*candProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-election-candidate", fmt.Sprintf("%s|%s|%v|%s", addr, name, lease, id))
	cmd.SysProcAttr = childAttr()
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &candProc{id: id, cmd: cmd, in: in, done: make(chan struct{})}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		p.kill()
		return nil, fmt.Errorf("election candidate %s did not start", id)
	}
	go func() {
		defer close(p.done)
		for lines.Scan() {
			fs := strings.Fields(lines.Text())
			ev := candEvent{id: id}
			if len(fs) > 0 {
				ev.what = fs[0]
			}
			n := func(i int) int64 {
				if i >= len(fs) {
					return 0
				}
				v, _ := strconv.ParseInt(fs[i], 10, 64)
				return v
			}
			ev.term, ev.t, ev.t2 = n(1), n(2), n(3)
			events <- ev
		}
		_ = cmd.Wait()
	}()
	return p, nil
}

// kill ends the process (resumed first, should it be stopped) and waits
// for it.
func (p *candProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Kill()
	p.in.Close()
	if p.done != nil {
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	}
}

// electionEchoMain is the echo process of the election scenario's floor
// (-election-echo addr): it answers each message on "bench-echo-ping" with
// the same payload on "bench-echo-pong", so that the suite can time one
// pub/sub message between two processes (half the ping-pong). It prints
// "ready" once subscribed and exits when stdin closes.
func electionEchoMain(addr string) int {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ps := rdb.Subscribe(ctx, "bench-echo-ping")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench: -election-echo:", err)
		return 1
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	fmt.Println("ready")
	for {
		msg, err := ps.ReceiveMessage(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -election-echo:", err)
			return 1
		}
		if err := rdb.Publish(ctx, "bench-echo-pong", msg.Payload).Err(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: -election-echo:", err)
			return 1
		}
	}
}

// crossMessage times one pub/sub message between two processes: half the
// median of 15 ping-pongs, 50 ms apart, with an echo process.
func crossMessage(ctx context.Context, srv *server) (time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, "-election-echo", srv.addr)
	cmd.SysProcAttr = childAttr()
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	if sc := bufio.NewScanner(out); !sc.Scan() || sc.Text() != "ready" {
		return 0, fmt.Errorf("election echo process did not start")
	}
	rdb := srv.client()
	defer rdb.Close()
	ps := rdb.Subscribe(ctx, "bench-echo-pong")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		return 0, err
	}
	var rtts []time.Duration
	for i := range 16 {
		// Apart, so that the echo process is idle when each ping comes, as
		// a waiting candidate is.
		sleep(ctx, 50*time.Millisecond)
		t0 := time.Now()
		if err := rdb.Publish(ctx, "bench-echo-ping", strconv.Itoa(i)).Err(); err != nil {
			return 0, err
		}
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := ps.ReceiveMessage(mctx)
		cancel()
		if err != nil {
			return 0, err
		}
		if i > 0 {
			rtts = append(rtts, time.Since(t0))
		}
	}
	slices.Sort(rtts)
	return percentile(rtts, 0.5) / 2, nil
}
