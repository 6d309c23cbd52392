package redistest

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// Reexec starts the test binary again as a child process, running no test,
// with env ("NAME=value") added to its environment: a worker that the
// binary's init recognises by it. Its stdin and stdout are piped to the
// caller, its stderr is the test's. It is killed (after a SIGCONT, in case
// the test stopped it) when the test ends.
func Reexec(tb testing.TB, env string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser) {
	tb.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err = cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, stdin, stdout
}
