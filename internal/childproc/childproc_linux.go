package childproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

var (
	mu   sync.Mutex
	live int         // children started (or starting) and not yet waited for
	work chan func() // the forking goroutine's queue; nil when it is not running
)

func start(cmd *exec.Cmd) (func() error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	q := acquire()
	errc := make(chan error, 1)
	q <- func() { errc <- cmd.Start() }
	if err := <-errc; err != nil {
		release()
		return nil, err
	}
	var once sync.Once
	return func() error {
		err := cmd.Wait()
		once.Do(release)
		return err
	}, nil
}

// acquire counts one more child and returns the forking goroutine's queue,
// starting that goroutine if it is not running.
func acquire() chan<- func() {
	mu.Lock()
	defer mu.Unlock()
	if work == nil {
		work = make(chan func())
		go forker(work)
	}
	live++
	return work
}

// release counts one child less; with none left the forking goroutine ends
// (and its thread with it, which kills nothing since no child is left).
func release() {
	mu.Lock()
	defer mu.Unlock()
	live--
	if live == 0 {
		close(work)
		work = nil
	}
}

// forker runs the forks on one thread. It never unlocks the thread: when it
// returns the runtime ends the thread rather than reuse a thread whose
// children the kernel tracks.
func forker(q <-chan func()) {
	runtime.LockOSThread()
	for f := range q {
		f()
	}
}
