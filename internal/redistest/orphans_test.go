package redistest

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"time"
)

// orphanChildEnv makes the test binary the child of the orphan tests: it
// starts servers, prints "pids <pid>..." and, once its stdin gives it a
// line, does what the mode says: "kill" waits to be killed, "timeout" panics
// on a timer goroutine as go test's -timeout does, "exit" exits without
// stopping anything.
const orphanChildEnv = "REDISTEST_ORPHAN_CHILD"

func orphanChild(mode string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "orphan child:", err)
		os.Exit(3)
	}
	bin, _, err := findBinaries()
	if err != nil {
		fail(err)
	}
	start := func() *Server {
		dir, err := os.MkdirTemp("", "orphan-child-")
		if err != nil {
			fail(err)
		}
		s, err := newServer(bin, dir, nil)
		if err != nil {
			fail(err)
		}
		return s
	}
	plain := start()
	// Started from a goroutine locked to its thread, which ends with the
	// goroutine: a parent-death signal tied to that thread would fire now.
	onThread := make(chan *Server)
	go func() {
		runtime.LockOSThread()
		onThread <- start()
	}()
	threaded := <-onThread
	fmt.Printf("pids %d %d\n", plain.Pid(), threaded.Pid())
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fail(err)
	}
	switch mode {
	case "kill":
		time.Sleep(time.Hour)
	case "timeout":
		time.AfterFunc(0, func() { panic("test timed out after 1s") })
		time.Sleep(time.Hour)
	default:
		os.Exit(1)
	}
}
