package redisson

import (
	"context"
	"sync"
)

// lazyLoop is the lifecycle every background service shares: its
// goroutines start on first use and never after stop; stop cancels the
// context they are given (their stop signal), and wait joins them all. A
// service with one loop (the watchdog, the janitor, the MapCache eviction
// pass) starts it with start; one with a goroutine per job (the queue
// dispatcher, the delayed-queue mover, the Client's object handles) starts
// each with spawn; a goroutine started elsewhere (a MapCache listener's, by
// its Topic subscription) is counted in with join and out with leave.
// Client.Close stops each service's lazyLoop, then waits for it. A lazyLoop
// is safe for concurrent use; newLazyLoop makes one.
type lazyLoop struct {
	// ctx is the stop signal, cancelled by stop: every goroutine is given
	// it, and done exposes it to callers that wait beside them.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex // orders every start against stop
	started bool       // start's loop runs or ran
	stopped bool
	wg      sync.WaitGroup // every goroutine of the lazyLoop
}

func newLazyLoop() *lazyLoop {
	ctx, cancel := context.WithCancel(context.Background())
	return &lazyLoop{ctx: ctx, cancel: cancel}
}

// start runs loop on a goroutine of l the first time it is called, and
// reports whether the loop runs (or ran): false once l is stopped. loop
// must return once its context is cancelled.
func (l *lazyLoop) start(loop func(ctx context.Context)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	if !l.started {
		l.started = true
		l.goLocked(loop)
	}
	return true
}

// spawn runs f on a goroutine of l, and reports whether it started: not
// once l is stopped. f must return once its context is cancelled (or once
// another signal its owner documents has fired before wait).
func (l *lazyLoop) spawn(f func(ctx context.Context)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	l.goLocked(f)
	return true
}

func (l *lazyLoop) goLocked(f func(ctx context.Context)) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f(l.ctx)
	}()
}

// join counts in a goroutine about to be started elsewhere, which calls
// leave when it ends; it reports false once l is stopped (then the
// goroutine must not start).
func (l *lazyLoop) join() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	l.wg.Add(1)
	return true
}

// leave counts out a goroutine counted in by join.
func (l *lazyLoop) leave() { l.wg.Done() }

// stop cancels the stop signal; no goroutine of l starts after it. It
// reports whether this call stopped l.
func (l *lazyLoop) stop() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	l.stopped = true
	l.cancel()
	return true
}

// isStopped reports whether stop has been called.
func (l *lazyLoop) isStopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped
}

// done is closed by stop.
func (l *lazyLoop) done() <-chan struct{} { return l.ctx.Done() }

// wait waits for every goroutine of l; call it after stop.
func (l *lazyLoop) wait() { l.wg.Wait() }

// close stops l and waits for its goroutines.
func (l *lazyLoop) close() {
	l.stop()
	l.wait()
}
