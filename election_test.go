package redisson

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// electionName returns a unique election name whose keys are deleted when
// the test ends.
func electionName(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), prefixName("redisson_election", name)) })
	return name
}

// mustCampaign campaigns and fails the test on error.
func mustCampaign(t *testing.T, ctx context.Context, e *Election, value string) *Leadership {
	t.Helper()
	lead, err := e.Campaign(ctx, value)
	if err != nil {
		t.Fatalf("Campaign(%q): %v", value, err)
	}
	return lead
}

// recvLeader reads one leader from ch, failing after d.
func recvLeader(t *testing.T, ch <-chan Leader, d time.Duration) Leader {
	t.Helper()
	select {
	case ld, ok := <-ch:
		if !ok {
			t.Fatal("Observe channel closed")
		}
		return ld
	case <-time.After(d):
		t.Fatalf("no leader observed within %v", d)
	}
	return Leader{}
}

// A waiting candidate takes over as soon as the leader resigns (woken by
// the unlock message, well before any lease could run out), with a higher
// term; Leader, Observe (on a client that does not campaign) and the old
// leadership's Err and Context all follow.
func TestElectionResignHandsOver(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := electionName(t, rdb)
	// A lease far longer than the test: only the message can wake b.
	opts := &Options{WatchdogTimeout: time.Minute}
	ea := newClient(t, rdb, opts).GetElection(name)
	eb := newClient(t, rdb, opts).GetElection(name)
	eo := newClient(t, rdb, opts).GetElection(name)

	if _, err := ea.Leader(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("Leader before any campaign = %v; want ErrNoLeader", err)
	}
	obs, err := eo.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := mustCampaign(t, ctx, ea, "a")
	if got := recvLeader(t, obs, 10*time.Second); got != (Leader{"a", a.Term()}) {
		t.Fatalf("observed %+v; want {a %d}", got, a.Term())
	}
	if got, err := eb.Leader(ctx); err != nil || got != (Leader{"a", a.Term()}) {
		t.Fatalf("Leader = %+v, %v; want {a %d}", got, err, a.Term())
	}
	actx, cancel := a.Context(ctx)
	defer cancel()

	bch := make(chan *Leadership, 1)
	go func() {
		lead, err := eb.Campaign(ctx, "b")
		if err != nil {
			t.Error(err)
		}
		bch <- lead
	}()
	time.Sleep(200 * time.Millisecond) // b waits
	select {
	case <-bch:
		t.Fatal("b leads while a does")
	default:
	}
	if err := a.Err(); err != nil {
		t.Fatalf("a.Err() = %v while leading", err)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	var b *Leadership
	select {
	case b = <-bch:
	case <-time.After(20 * time.Second): // the lease is a minute
		t.Fatal("b did not take over after a resigned")
	}
	if b == nil {
		t.Fatal("b's campaign failed")
	}
	if b.Term() <= a.Term() {
		t.Fatalf("b's term %d; want above a's %d", b.Term(), a.Term())
	}
	if got := recvLeader(t, obs, 10*time.Second); got != (Leader{"b", b.Term()}) {
		t.Fatalf("observed %+v; want {b %d}", got, b.Term())
	}
	if err := a.Err(); !errors.Is(err, ErrResigned) {
		t.Fatalf("a.Err() after Resign = %v; want ErrResigned", err)
	}
	<-actx.Done()
	if c := context.Cause(actx); !errors.Is(c, ErrResigned) {
		t.Fatalf("a's context cause %v; want ErrResigned", c)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatalf("second Resign = %v; want nil", err)
	}
	if err := b.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := eo.Leader(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("Leader after the last Resign = %v; want ErrNoLeader", err)
	}
	if n := rdb.Exists(ctx, name, prefixName("redisson_election", name)).Val(); n != 0 {
		t.Fatalf("%d keys of lock and record left after the last Resign; want 0", n)
	}
}

// A candidate whose context ends while it waits leaves nothing behind: the
// leader's hold is the only field, and once the leader resigns the election
// has no leader and no key but the term counter.
func TestElectionCampaignCancelledLeavesNothing(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := electionName(t, rdb)
	c := newClient(t, rdb, nil)
	e := c.GetElection(name)
	a := mustCampaign(t, ctx, e, "a")
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := e.Campaign(wctx, "b")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Campaign with an ending context = %v; want DeadlineExceeded", err)
	}
	if n := rdb.HLen(ctx, name).Val(); n != 1 {
		t.Fatalf("lock has %d fields; want the leader's alone", n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Campaign(cctx, "c"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Campaign with a cancelled context = %v; want Canceled", err)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Leader(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("Leader = %+v, %v; want ErrNoLeader", got, err)
	}
	if n := rdb.Exists(ctx, name, prefixName("redisson_election", name)).Val(); n != 0 {
		t.Fatalf("%d keys left; want 0", n)
	}
	eventually(t, 5*time.Second, "no subscription left", func() bool {
		return c.pubsub.stats().channels == 0
	})
}

// A leader whose lock is deleted under it (ForceUnlock) learns of the loss
// (ErrLeadershipLost, matching ErrLeaseLost), Leader reports nobody until
// the next candidate announces itself, and Resign says the leadership was
// lost.
func TestElectionLeaseLost(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := electionName(t, rdb)
	c := newClient(t, rdb, &Options{WatchdogTimeout: 600 * time.Millisecond})
	e := c.GetElection(name)
	a := mustCampaign(t, ctx, e, "a")
	if _, err := c.GetLock(name).ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Leader(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("Leader after the lock was deleted = %v; want ErrNoLeader", err)
	}
	select {
	case <-a.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("leadership not ended after its lock was deleted")
	}
	if err := a.Err(); !errors.Is(err, ErrLeadershipLost) || !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Err() = %v; want ErrLeadershipLost matching ErrLeaseLost", err)
	}
	if err := a.Resign(ctx); !errors.Is(err, ErrLeadershipLost) {
		t.Fatalf("Resign after the loss = %v; want ErrLeadershipLost", err)
	}
	b := mustCampaign(t, ctx, e, "b")
	if got, err := e.Leader(ctx); err != nil || got != (Leader{"b", b.Term()}) || b.Term() <= a.Term() {
		t.Fatalf("Leader = %+v, %v; want {b %d} above a's term %d", got, err, b.Term(), a.Term())
	}
	if err := b.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// Terms keep growing across FLUSHALL, as lock tokens do: the counter is
// created anew from the server clock.
func TestElectionTermSurvivesFlushall(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	e := newClient(t, rdb, nil).GetElection("flushed")
	a := mustCampaign(t, ctx, e, "a")
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b := mustCampaign(t, ctx, e, "b")
	if b.Term() <= a.Term() {
		t.Fatalf("term after FLUSHALL %d; want above %d", b.Term(), a.Term())
	}
}

// Bad names and a closed client are refused with their sentinels, and
// Redis is left unchanged.
func TestElectionRefusals(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	e := c.GetElection("")
	if _, err := e.Campaign(ctx, "v"); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("Campaign on an empty name = %v; want ErrEmptyName", err)
	}
	if _, err := e.Leader(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("Leader on an empty name = %v; want ErrEmptyName", err)
	}
	if _, err := e.Observe(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("Observe on an empty name = %v; want ErrEmptyName", err)
	}
	name := electionName(t, rdb)
	if err := rdb.Set(ctx, name, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetElection(name).Campaign(ctx, "v"); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Campaign on a string key = %v; want ErrWrongType", err)
	}
	rdb.Del(ctx, name)
	c.Close()
	e = c.GetElection(name)
	if _, err := e.Campaign(ctx, "v"); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Campaign after Close = %v; want ErrClientClosed", err)
	}
	if _, err := e.Observe(ctx); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Observe after Close = %v; want ErrClientClosed", err)
	}
	if n := rdb.Exists(ctx, name, prefixName("redisson_election", name)).Val(); n != 0 {
		t.Fatalf("%d keys written by refused calls; want 0", n)
	}
}

// The observer's channel closes when its context ends, and its goroutine
// and subscription go with it.
func TestElectionObserveEnds(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := electionName(t, rdb)
	c := newClient(t, rdb, nil)
	octx, cancel := context.WithCancel(ctx)
	ch, err := c.GetElection(name).Observe(octx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("a leader observed with nobody campaigning")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Observe channel not closed after its context ended")
	}
	eventually(t, 5*time.Second, "subscription left", func() bool { return c.pubsub.stats().channels == 0 })
}

// A Redisson RFencedLock holder of the election's name (the stand-in for
// Java, foreign_test.go) keeps the Go candidates waiting, with no leader of
// record; its unlock message wakes one, whose term continues the counter
// the Java acquisition advanced, and a Java candidate then waits in turn.
func TestElectionJavaLockTakesPart(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := electionName(t, rdb)
	e := newClient(t, rdb, &Options{WatchdogTimeout: time.Minute}).GetElection(name)
	java := newForeignClient(rdb).getLock(name)
	pttl, javaToken, err := java.tryLockAndGetToken(ctx, 60000)
	if err != nil || pttl != -1 {
		t.Fatalf("Java tryLockAndGetToken = %d, %v; want held", pttl, err)
	}
	got := make(chan *Leadership, 1)
	go func() {
		lead, err := e.Campaign(ctx, "go")
		if err != nil {
			t.Error(err)
		}
		got <- lead
	}()
	waitSubscribers(t, rdb, prefixName("redisson_lock__channel", name), 1)
	if _, err := e.Leader(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("Leader while Java holds the lock = %v; want ErrNoLeader", err)
	}
	select {
	case <-got:
		t.Fatal("a Go candidate leads while Java holds the lock")
	default:
	}
	mustForeignUnlock(t, ctx, java, 1)
	var lead *Leadership
	select {
	case lead = <-got:
	case <-time.After(wakeBound):
		t.Fatalf("Go candidate not woken by the Java unlock within %v (the lease is a minute)", wakeBound)
	}
	if lead == nil || lead.Term() <= javaToken {
		t.Fatalf("Go leadership %v; want a term above Java's token %d", lead, javaToken)
	}
	if pttl, _, err := java.tryLockAndGetToken(ctx, 60000); err != nil || pttl <= 0 {
		t.Fatalf("Java tryLock while Go leads = %d, %v; want refused with the lease left", pttl, err)
	}
	if err := lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if pttl, tok, err := java.tryLockAndGetToken(ctx, 60000); err != nil || pttl != -1 || tok <= lead.Term() {
		t.Fatalf("Java tryLock after Resign = %d, token %d, %v; want held with a token above %d", pttl, tok, err, lead.Term())
	}
	mustForeignUnlock(t, ctx, java, 1)
}

// On Redis Cluster (sharded pub/sub by default) an election of a name with
// a hash tag and one without hand over and are observed the same way.
func TestElectionCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	ctx := testCtx(t, time.Minute)
	opts := &Options{WatchdogTimeout: time.Minute}
	ca, cb := newClient(t, rdb, opts), newClient(t, cl.Client(t), opts)
	for _, name := range []string{uniqueName(t, rdb), "{" + uniqueName(t, rdb) + "}:jobs"} {
		t.Cleanup(func() { rdb.Del(context.Background(), prefixName("redisson_election", name)) })
		obs, err := cb.GetElection(name).Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a := mustCampaign(t, ctx, ca.GetElection(name), "a")
		if got := recvLeader(t, obs, 10*time.Second); got != (Leader{"a", a.Term()}) {
			t.Fatalf("%s: observed %+v; want {a %d}", name, got, a.Term())
		}
		bch := make(chan *Leadership, 1)
		go func() {
			lead, err := cb.GetElection(name).Campaign(ctx, "b")
			if err != nil {
				t.Error(err)
			}
			bch <- lead
		}()
		time.Sleep(200 * time.Millisecond)
		if err := a.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		var b *Leadership
		select {
		case b = <-bch:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: b did not take over", name)
		}
		if got := recvLeader(t, obs, 10*time.Second); b == nil || got != (Leader{"b", b.Term()}) || b.Term() <= a.Term() {
			t.Fatalf("%s: observed %+v after the hand-over; want b with a term above %d", name, got, a.Term())
		}
		if got, err := ca.GetElection(name).Leader(ctx); err != nil || got.Value != "b" {
			t.Fatalf("%s: Leader = %+v, %v", name, got, err)
		}
		if err := b.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeadershipErrAfterWatchdogDrop: once the watchdog has dropped a
// leadership's hold (its deadline passed, or a renewal found the lock
// gone), Err reports the loss at once, before the hold is ended (which
// happens just after, outside the watchdog's lock): never a nil in between.
func TestLeadershipErrAfterWatchdogDrop(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	lead, err := c.GetElection(uniqueName(t, rdb)).Campaign(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	w := c.watchdog
	w.mu.Lock()
	lead.h.expires = time.Now().Add(-time.Millisecond) // as expireOverdue found it
	delete(w.holds, lead.h)
	w.mu.Unlock()
	if err := lead.Err(); !errors.Is(err, ErrLeadershipLost) {
		t.Fatalf("Err after the watchdog dropped the hold = %v; want ErrLeadershipLost", err)
	}
}
