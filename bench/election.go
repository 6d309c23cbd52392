package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// The election scenario: candidates in separate processes campaign for one
// Election; the suite kills the leader with SIGKILL, stalls it with
// SIGSTOP, or asks it to Resign, and times how long the election is
// without a leader: from the kill (stop, Resign call) to the moment the
// next leader's Campaign returned, and to its first act (a term-fenced
// write accepted by Redis).
//
// The floor of a kill or a stall is what any lease-based election must
// wait: the rest of the dead leader's lease (read with PTTL on the lock
// right after the kill: the lease minus the time since its last renewal),
// plus one uncontended Campaign (its round trips), timed in this process.
// The floor of a Resign is one pub/sub message from one process to another
// (half a ping-pong with an echo process) plus one uncontended Campaign.

const (
	electionName       = "bench-election"
	electionCandidates = 3
)

// electionKinds are the ways a term ends, in the order the rounds cycle
// through them.
var electionKinds = []string{"kill", "stop", "resign"}

// electionSample is one measured hand-over.
type electionSample struct {
	lead, act, floor time.Duration // from the kill; floor: the least possible lead
	lossSeen         bool          // stop: the resumed leader's Err reported the loss
}

func runElection(ctx context.Context, s *suite) error {
	lease, perRound := time.Second, 8
	if s.short {
		lease, perRound = 300*time.Millisecond, 1
	}
	t := &table{
		title: fmt.Sprintf("Leader election hand-over, %d candidate processes", electionCandidates),
		note: fmt.Sprintf("Lease = WatchdogTimeout %v, renewed every %v (a third of it). Each round ends %d terms of each kind, "+
			"cycling kill, stop, resign, each %v-%v after the term began (a random phase of the renewal period); "+
			"p50/p99/max are over the round's hand-overs, then median (min-max) over rounds. "+
			"Lead: the kill -9 / SIGSTOP / Resign call to the next leader's Campaign returning (another process's clock, "+
			"the same machine). Act: to its first write fenced by its term, accepted by Redis. Floor: kill and stop, the dead "+
			"leader's remaining lease (PTTL of the lock just after the kill) plus one uncontended Campaign; resign, one "+
			"pub/sub message between two processes (half a PUBLISH ping-pong with an idle echo process) plus one uncontended Campaign. Refused: acts of a resumed stalled leader that the term fence refused; "+
			"loss seen: stalled leaders whose Err reported the loss on resuming.",
			lease, (lease / 3).Round(time.Millisecond), perRound, (lease / 3).Round(time.Millisecond), (2 * lease / 3).Round(time.Millisecond)),
		cols: []col{
			{key: "p50", head: "lead p50 ms (min-max)", format: "%.1f", spread: true},
			{key: "p99", head: "lead p99 ms", format: "%.1f"},
			{key: "max", head: "lead max ms", format: "%.1f"},
			{key: "act", head: "first act p50 ms", format: "%.1f"},
			{key: "floor", head: "floor p50 ms", format: "%.1f"},
			{key: "camp", head: "of which Campaign ms", format: "%.2f"},
			{key: "ratio", head: "lead ÷ floor p50 (min-max)", format: "%.3f", spread: true},
			{key: "rmax", head: "lead ÷ floor max", format: "%.3f"},
			{key: "extra", head: "lead − floor p50 ms", format: "%.1f"},
			{key: "refused", head: "refused acts", format: "%.0f"},
			{key: "seen", head: "loss seen", format: "%.0f"},
		},
	}
	settings := fmt.Sprintf("lease %v, renewal %v", lease, (lease / 3).Round(time.Millisecond))
	rows := map[string]*row{
		"kill":   t.row("kill -9 of the leader", settings, kindOurs),
		"stop":   t.row("SIGSTOP of the leader", settings, kindOurs),
		"resign": t.row("Leadership.Resign", settings, kindOurs),
	}
	for range s.rounds {
		res, err := electionRound(ctx, lease, perRound)
		for _, k := range electionKinds {
			rows[k].add(res[k], err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	s.emit(t)
	return nil
}

// electionRound runs one round on a fresh server and returns its metrics
// by kind.
func electionRound(ctx context.Context, lease time.Duration, perRound int) (map[string]map[string]float64, error) {
	srv, err := startServer()
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	admin := srv.client()
	defer admin.Close()
	campaign, message, err := electionFloors(ctx, srv, lease)
	if err != nil {
		return nil, err
	}

	events := make(chan candEvent, 1<<14)
	procs := map[string]*candProc{}
	defer func() {
		for _, p := range procs {
			p.kill()
		}
	}()
	next := 0
	spawn := func() error {
		next++
		id := "c" + strconv.Itoa(next)
		p, err := startCandidate(srv.addr, electionName, lease, id, events)
		if err == nil {
			procs[id] = p
		}
		return err
	}
	for range electionCandidates {
		if err := spawn(); err != nil {
			return nil, err
		}
	}
	w := &electionWatch{events: events, timeout: 3*lease + 10*time.Second}
	cur, err := w.leader(ctx, 0)
	if err != nil {
		return nil, err
	}
	samples := map[string][]electionSample{}
	refused := 0
	for i := range perRound * len(electionKinds) {
		kind := electionKinds[i%len(electionKinds)]
		// A random phase of the renewal period, at least one renewal in.
		sleep(ctx, lease/3+rand.N(lease/3))
		p := procs[cur.id]
		var sm electionSample
		var t0 time.Time
		switch kind {
		case "kill", "stop":
			sig := syscall.SIGKILL
			if kind == "stop" {
				sig = syscall.SIGSTOP
			}
			t0 = time.Now()
			if err := p.cmd.Process.Signal(sig); err != nil {
				return nil, err
			}
			rest, err := remainingLease(ctx, admin, t0)
			if err != nil {
				return nil, err
			}
			sm.floor = rest + campaign
		case "resign":
			if _, err := fmt.Fprintln(p.in, "resign"); err != nil {
				return nil, err
			}
			sm.floor = message + campaign
		}
		nxt, err := w.leader(ctx, cur.term)
		if err != nil {
			return nil, err
		}
		if kind == "resign" {
			inv, err := w.resigned(ctx, cur.term)
			if err != nil {
				return nil, err
			}
			t0 = time.Unix(0, inv)
		}
		sm.lead = time.Unix(0, nxt.lead).Sub(t0)
		sm.act = time.Unix(0, nxt.act).Sub(t0)
		switch kind {
		case "kill":
			p.kill()
			delete(procs, cur.id)
			if err := spawn(); err != nil {
				return nil, err
			}
		case "stop":
			if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				return nil, err
			}
			sm.lossSeen = w.ended(ctx, cur.term) == nil
		}
		refused += w.refused
		w.refused = 0
		samples[kind] = append(samples[kind], sm)
		cur = nxt
	}
	out := map[string]map[string]float64{}
	for _, k := range electionKinds {
		out[k] = electionMetrics(samples[k])
		out[k]["camp"] = ms(campaign)
		out[k]["refused"] = 0
		if k == "stop" {
			out[k]["refused"] = float64(refused)
		}
	}
	return out, nil
}

// electionMetrics summarises one kind's samples of a round.
func electionMetrics(ss []electionSample) map[string]float64 {
	var lead, act, floor, ratio, extra []float64
	seen := 0
	for _, s := range ss {
		lead = append(lead, ms(s.lead))
		act = append(act, ms(s.act))
		floor = append(floor, ms(s.floor))
		ratio = append(ratio, s.lead.Seconds()/s.floor.Seconds())
		extra = append(extra, ms(s.lead-s.floor))
		if s.lossSeen {
			seen++
		}
	}
	for _, xs := range [][]float64{lead, act, floor, ratio, extra} {
		slices.Sort(xs)
	}
	return map[string]float64{
		"p50": percentile(lead, 0.5), "p99": percentile(lead, 0.99), "max": lead[len(lead)-1],
		"act": percentile(act, 0.5), "floor": percentile(floor, 0.5),
		"ratio": percentile(ratio, 0.5), "rmax": ratio[len(ratio)-1], "extra": percentile(extra, 0.5),
		"seen": float64(seen),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// remainingLease reads the election lock's PTTL just after t0 and returns
// the lease left at t0 (the reply's PTTL counted from the middle of the
// round trip).
func remainingLease(ctx context.Context, admin *redis.Client, t0 time.Time) (time.Duration, error) {
	sent := time.Now()
	pttl, err := admin.PTTL(ctx, electionName).Result()
	got := time.Now()
	if err != nil {
		return 0, err
	}
	if pttl < 0 { // already gone: the lease ran out at about t0
		return 0, nil
	}
	expiry := sent.Add(got.Sub(sent) / 2).Add(pttl)
	return max(0, expiry.Sub(t0)), nil
}

// electionFloors times an uncontended Campaign in this process (the median
// of 15, each on a fresh election) and one pub/sub message from one process
// to another (crossMessage).
func electionFloors(ctx context.Context, srv *server, lease time.Duration) (campaign, message time.Duration, err error) {
	rdb := srv.client()
	defer rdb.Close()
	c, err := redisson.New(rdb, &redisson.Options{WatchdogTimeout: lease})
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	var cs []time.Duration
	for i := range 16 {
		e := c.GetElection("bench-floor-" + strconv.Itoa(i))
		t0 := time.Now()
		l, err := e.Campaign(ctx, "floor")
		took := time.Since(t0)
		if err != nil {
			return 0, 0, err
		}
		if err := l.Resign(ctx); err != nil {
			return 0, 0, err
		}
		if i > 0 { // the first one loads the scripts
			cs = append(cs, took)
		}
	}
	slices.Sort(cs)
	message, err = crossMessage(ctx, srv)
	return percentile(cs, 0.5), message, err
}

// electionWatch reads the candidates' events.
type electionWatch struct {
	events  <-chan candEvent
	timeout time.Duration
	refused int
	pending []candEvent // read while waiting for something else
}

// leaderAt is a term whose leader has made its first act.
type leaderAt struct {
	id        string
	term      int64
	lead, act int64
}

// take returns the first event (pending ones first) matching ok, keeping
// the others for later calls.
func (w *electionWatch) take(ctx context.Context, ok func(candEvent) bool) (candEvent, error) {
	for i, ev := range w.pending {
		if ok(ev) {
			w.pending = slices.Delete(w.pending, i, i+1)
			return ev, nil
		}
	}
	deadline := time.NewTimer(w.timeout)
	defer deadline.Stop()
	for {
		select {
		case ev := <-w.events:
			switch {
			case ev.what == "refused":
				w.refused++
			case ok(ev):
				return ev, nil
			case ev.what == "resign" || ev.what == "end" || ev.what == "lead" || ev.what == "act":
				w.pending = append(w.pending, ev)
			}
		case <-deadline.C:
			return candEvent{}, fmt.Errorf("election: no expected event within %v", w.timeout)
		case <-ctx.Done():
			return candEvent{}, ctx.Err()
		}
	}
}

// leader waits for a term after the given one, and for its first act.
func (w *electionWatch) leader(ctx context.Context, after int64) (leaderAt, error) {
	ev, err := w.take(ctx, func(ev candEvent) bool { return ev.what == "lead" && ev.term > after })
	if err != nil {
		return leaderAt{}, err
	}
	act, err := w.take(ctx, func(a candEvent) bool { return a.what == "act" && a.term == ev.term })
	if err != nil {
		return leaderAt{}, err
	}
	// Terms older than this one are over: forget their leftovers.
	w.pending = slices.DeleteFunc(w.pending, func(p candEvent) bool {
		return (p.what == "lead" || p.what == "act") && p.term < ev.term
	})
	return leaderAt{id: ev.id, term: ev.term, lead: ev.t, act: act.t}, nil
}

// resigned returns the Resign invocation time of term.
func (w *electionWatch) resigned(ctx context.Context, term int64) (int64, error) {
	ev, err := w.take(ctx, func(ev candEvent) bool { return ev.what == "resign" && ev.term == term })
	if ev.t2 == 0 && err == nil {
		err = errors.New("election: resign line without times")
	}
	return ev.t, err
}

// ended waits for term's leader to report the end of its term.
func (w *electionWatch) ended(ctx context.Context, term int64) error {
	_, err := w.take(ctx, func(ev candEvent) bool { return ev.what == "end" && ev.term == term })
	return err
}
