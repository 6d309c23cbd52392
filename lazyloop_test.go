package redisson

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// The lifecycle every service shares: start runs its loop once, nothing
// starts after stop, and close returns only once every goroutine of the
// lazyLoop (started, spawned or joined) has ended.
func TestLazyLoopStartsOnceStopsAndJoins(t *testing.T) {
	l := newLazyLoop()
	var loops, spawned atomic.Int32
	ended := make(chan string, 8)
	loop := func(ctx context.Context) {
		loops.Add(1)
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // close must wait for this
		ended <- "loop"
	}
	for range 3 {
		if !l.start(loop) {
			t.Fatal("start before stop = false; want true")
		}
	}
	if !l.spawn(func(ctx context.Context) { spawned.Add(1); <-ctx.Done(); ended <- "spawned" }) {
		t.Fatal("spawn before stop = false; want true")
	}
	if !l.join() {
		t.Fatal("join before stop = false; want true")
	}
	go func() { <-l.done(); time.Sleep(20 * time.Millisecond); ended <- "joined"; l.leave() }()

	if l.isStopped() {
		t.Fatal("isStopped before stop = true")
	}
	l.close()
	if len(ended) != 3 {
		t.Fatalf("close returned with %d of 3 goroutines ended", len(ended))
	}
	if n := loops.Load(); n != 1 {
		t.Errorf("the loop ran %d times; want once", n)
	}
	if !l.isStopped() || l.stop() {
		t.Errorf("after close: isStopped %v, stop reported stopping again", l.isStopped())
	}
	if l.start(loop) || l.spawn(func(context.Context) { spawned.Add(1) }) || l.join() {
		t.Error("start, spawn or join after stop reported true; want false")
	}
	l.close() // a second close is a no-op
	if n := spawned.Load(); n != 1 {
		t.Errorf("%d spawned goroutines ran; want 1", n)
	}
}
