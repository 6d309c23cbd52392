// Command testprogress runs a go test command with -json and prints, instead
// of its silence, a line per finished package, a line every -every with the
// tests finished so far in each package still running (and the tests
// running now), the whole output of every failed test, and a summary. It
// exits with the go command's exit status.
//
//	go run ./.ci/testprogress [-every 30s] -- go test -race -count=1 -json ./...
//
// It uses the standard library only, so the module gains no dependency.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	every := flag.Duration("every", 30*time.Second, "how often to print the progress of running packages")
	label := flag.String("label", "", "a word put before each line printed, for a run beside another")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testprogress [-every 30s] [-label word] -- go test -json [flags] [packages]")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var w io.Writer = os.Stdout
	if *label != "" {
		w = &prefixWriter{w: os.Stdout, prefix: "[" + *label + "] ", start: true}
	}
	os.Exit(run(args, *every, w))
}

// run runs the command, reports its events and returns its exit status.
func run(args []string, every time.Duration, w io.Writer) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		return 2
	}
	// An interrupt reaches the go command too (same process group); keep
	// reading until it has reported what it could and exited.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		return 2
	}
	r := newReport(w, time.Now)
	lines := make(chan string)
	go readLines(out, lines)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case line, ok := <-lines:
			if !ok {
				done = true
				break
			}
			r.line(line)
		case <-tick.C:
			r.progress()
		}
	}
	err = cmd.Wait()
	r.summary()
	if err == nil {
		return 0
	}
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return 128 + int(st.Signal())
	}
	if code := cmd.ProcessState.ExitCode(); code > 0 {
		return code
	}
	fmt.Fprintln(os.Stderr, "testprogress:", err)
	return 1
}

// prefixWriter puts prefix before every line written through it, so that
// two runs printing to one terminal can be told apart.
type prefixWriter struct {
	w      io.Writer
	prefix string
	start  bool // the next byte begins a line
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out bytes.Buffer
	for _, c := range b {
		if p.start {
			out.WriteString(p.prefix)
		}
		out.WriteByte(c)
		p.start = c == '\n'
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}
