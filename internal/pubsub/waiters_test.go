package pubsub

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// These tests drive channel entries directly, with no connection: the
// wake-up order, the hand-off and the yield window are the engine's own.

// lockPolicy is the lock's wake policy (the root's lockWakePolicy, whose
// table the root's tests check): 0 hands off to one waiter, 1 wakes all,
// n >= 2 announces a hold taken after n-3 ms of waiting, negative numbers
// wake all.
func lockPolicy(payload string) Wake {
	switch payload {
	case "0":
		return Wake{N: 1, Handoff: true}
	case "1":
		return Wake{N: -1}
	}
	n, err := strconv.ParseInt(payload, 10, 64)
	switch {
	case err != nil:
	case n >= 2:
		return Wake{Taken: true, Age: time.Duration(n-3) * time.Millisecond}
	case n < 0:
		return Wake{N: -1}
	}
	return Wake{Ignored: true}
}

// eventually fails the test unless cond holds within d.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, d, what, cond)
}

func TestPubSubWakePolicy(t *testing.T) {
	p := New(Config{Health: time.Second})
	e := &channelEntry{key: Key{Name: "c"}, policy: lockPolicy, ready: make(chan struct{}), confirmed: true}
	p.entries[e.key] = e
	p.mu.Lock()
	subs := []*Subscription{e.join(p), e.join(p), e.join(p)}
	p.mu.Unlock()
	woke := make(chan int, 3)
	waitAll := func(order []int) {
		for _, i := range order {
			go func() {
				if ok, err := subs[i].Wait(context.Background(), 10*time.Second); ok && err == nil {
					woke <- i
				}
			}()
			eventually(t, 5*time.Second, "waiter queued", func() bool {
				p.mu.Lock()
				defer p.mu.Unlock()
				for _, w := range e.waiters {
					if w.seq == subs[i].seq {
						return true
					}
				}
				return false
			})
		}
	}
	send := func(payload string) {
		p.mu.Lock()
		e.apply(p, e.policy(payload))
		p.mu.Unlock()
	}
	none := func(what string) {
		t.Helper()
		select {
		case i := <-woke:
			t.Fatalf("%s woke waiter %d", what, i)
		case <-time.After(150 * time.Millisecond):
		}
	}

	// Queued out of order, woken in subscription order, one per unlock.
	waitAll([]int{2, 0, 1})
	send("0")
	if i := <-woke; i != 0 {
		t.Fatalf("unlock woke waiter %d; want 0 (first subscribed)", i)
	}
	none("one unlock message")

	// A client whose waiters have waited less than the last winner defers
	// its wake-up, and a taken message cancels it.
	send(strconv.Itoa(2 + 3600*1000)) // the last winner waited an hour
	send("0")
	send("2")
	none("an unlock followed by taken")
	// Deferred, not dropped: without a taken message the head wakes soon.
	send(strconv.Itoa(2 + 3600*1000))
	send("0")
	if i := <-woke; i != 1 {
		t.Fatalf("deferred wake-up woke %d; want 1", i)
	}
	waitAll([]int{1})

	// The read-unlock message wakes all, at once.
	send("1")
	got := map[int]bool{<-woke: true, <-woke: true}
	if !got[1] || !got[2] {
		t.Fatalf("read-unlock woke %v; want 1 and 2", got)
	}

	// A wake-up that finds no waiter is kept for the next one, not beyond
	// one per subscriber; a taken message clears it.
	send("0")
	if ok, err := subs[0].Wait(context.Background(), 10*time.Second); !ok || err != nil {
		t.Fatalf("wait after a kept wake-up = %v, %v", ok, err)
	}
	send("0")
	send("2")
	if ok, _ := subs[0].Wait(context.Background(), 50*time.Millisecond); ok {
		t.Fatal("wake-up kept across a taken message")
	}
	// A cancelled wait returns the context's error.
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := subs[0].Wait(cctx, 10*time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait = %v; want Canceled", err)
	}
}

// With many waiters per client, every client's oldest waiter has waited
// nearly as long as the last winner: only a client whose oldest waiter is
// less than half an unlock interval behind it wakes at once; one a whole
// interval behind defers its wake-up (and a taken message cancels it).
func TestPubSubHandoffWakesOnlyTheOldestClient(t *testing.T) {
	p := New(Config{Health: time.Second})
	defer p.Close()
	const lastAge, interval = 1260 * time.Millisecond, 20 * time.Millisecond
	client := func(name string, oldest time.Duration) (*channelEntry, *waiter) {
		return handoffClient(p, name, handoffPast{lastAge: lastAge, unlockAgo: interval, waited: oldest})
	}
	first, w1 := client("first", lastAge-interval/10)
	second, w2 := client("second", lastAge-interval)
	p.mu.Lock()
	for _, e := range []*channelEntry{first, second} {
		e.apply(p, e.policy("0"))
	}
	woke1, woke2 := len(w1.ch) == 1, len(w2.ch) == 1
	deferred1, deferred2 := first.delayed != nil, second.delayed != nil
	second.apply(p, second.policy(strconv.Itoa(3+int(lastAge.Milliseconds()))))
	cancelled := second.delayed == nil
	p.mu.Unlock()
	if !woke1 || deferred1 {
		t.Errorf("oldest waiter %v behind: woken %v, deferred %v; want woken at once", interval/10, woke1, deferred1)
	}
	if woke2 || !deferred2 {
		t.Errorf("oldest waiter %v behind: woken %v, deferred %v; want deferred", interval, woke2, deferred2)
	}
	if !cancelled {
		t.Error("a taken message left the deferred wake-up in place")
	}
	select {
	case <-w2.ch:
		t.Error("cancelled deferred wake-up was delivered")
	case <-time.After(50 * time.Millisecond):
	}
}

// handoffPast is what a client heard of a lock before an unlock message:
// the last winner's wait, how long ago the last unlock and taken messages
// came (0: none heard), and how long its one waiter has waited.
type handoffPast struct {
	lastAge, unlockAgo, takenAgo, waited time.Duration
}

// handoffClient returns the channel entry of a client of p that heard past,
// with its one waiter.
func handoffClient(p *Service, name string, past handoffPast) (*channelEntry, *waiter) {
	e := &channelEntry{key: Key{Name: name}, policy: lockPolicy, ready: make(chan struct{}), confirmed: true}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.entries[e.key] = e
	e.join(p)
	now := time.Now()
	e.lastAge = past.lastAge
	if past.unlockAgo > 0 {
		e.unlockAt = now.Add(-past.unlockAgo)
	}
	if past.takenAgo > 0 {
		e.takenAt = now.Add(-past.takenAgo)
	}
	w := &waiter{ch: make(chan struct{}, 1), seq: 1, since: now.Add(-past.waited), woken: new(wokenBy)}
	e.waiters = []*waiter{w}
	return e, w
}

// When the lock was held longer than the last winner waited there is no
// steady queue: a client whose oldest waiter was already waiting when the
// holder took the lock wakes it at once, however its wait compares with
// the last winner's; one whose waiters all came during the hold still
// defers its wake-up behind them.
func TestPubSubHandoffAfterLongHoldWakesEarlierWaiterAtOnce(t *testing.T) {
	p := New(Config{Health: time.Second})
	defer p.Close()
	const lastAge, hold = 800 * time.Millisecond, 500 * time.Millisecond
	client := func(name string, waited time.Duration) (*channelEntry, *waiter) {
		// The last unlock message came long before the holder took the
		// lock (the hold before ended by its lease running out, silently).
		return handoffClient(p, name, handoffPast{lastAge: lastAge, unlockAgo: 4 * hold, takenAgo: hold, waited: waited})
	}
	// Waited less than the last winner, by more than a tenth of its wait.
	lost, wLost := client("lost", hold+2*time.Millisecond)
	late, wLate := client("late", hold/2)
	p.mu.Lock()
	for _, e := range []*channelEntry{lost, late} {
		e.apply(p, e.policy("0"))
	}
	wokeLost, deferredLost := len(wLost.ch) == 1, lost.delayed != nil
	wokeLate, deferredLate := len(wLate.ch) == 1, late.delayed != nil
	late.cancelDelayed()
	p.mu.Unlock()
	if !wokeLost || deferredLost {
		t.Errorf("waiter from before the holder's take: woken %v, deferred %v; want woken at once", wokeLost, deferredLost)
	}
	if wokeLate || !deferredLate {
		t.Errorf("waiter that came during the hold: woken %v, deferred %v; want deferred", wokeLate, deferredLate)
	}
}

// A deferred hand-off wake-up waits longer the further the client's oldest
// waiter is behind the expected winner, so that if nobody woke at once the
// oldest deferred waiter goes first; always within a few handoffDelay.
func TestPubSubHandoffWaitGrowsWithDistance(t *testing.T) {
	const interval = 20 * time.Millisecond
	for range 100 {
		near := handoffWait(interval, interval)
		far := handoffWait(2*interval, interval)
		if near >= far {
			t.Fatalf("one interval behind waits %v, two intervals %v; want less", near, far)
		}
		for _, d := range []time.Duration{near, far, handoffWait(time.Hour, interval), handoffWait(time.Hour, 0)} {
			if d < handoffDelay || d > 5*handoffDelay {
				t.Fatalf("deferral %v; want within [%v, %v]", d, handoffDelay, 5*handoffDelay)
			}
		}
	}
}

// The winner's taken message can arrive before the releaser's own reply:
// it still answers the releaser's next first try, unless an unlock message
// came after it (the object is free again).
func TestPubSubTakenSinceReleaseCountsEarlyAnnouncement(t *testing.T) {
	p := New(Config{Health: time.Second})
	defer p.Close()
	e := &channelEntry{key: Key{Name: "c"}, policy: lockPolicy, ready: make(chan struct{}), confirmed: true}
	p.mu.Lock()
	p.entries[e.key] = e
	sub := e.join(p)
	p.mu.Unlock()
	send := func(payload string) {
		p.mu.Lock()
		e.apply(p, e.policy(payload))
		p.mu.Unlock()
	}
	sent := time.Now()
	time.Sleep(time.Millisecond)
	send("0")   // the release's own unlock message
	send("103") // the winner's announcement, before the release's reply
	time.Sleep(time.Millisecond)
	p.Yield("c", sent) // the reply arrives
	if !sub.TakenSinceRelease() {
		t.Fatal("announcement before the release's reply not counted")
	}
	send("0")
	if sub.TakenSinceRelease() {
		t.Fatal("taken reported after a later unlock message")
	}
	p.Yield("c", time.Now())
	if sub.TakenSinceRelease() {
		t.Fatal("announcement before the release counted")
	}
}
