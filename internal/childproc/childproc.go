// Package childproc starts helper processes (the test harnesses'
// redis-server) that the kernel kills when the process that started them
// ends, however it ends: a normal exit, a panic such as go test's -timeout,
// SIGQUIT or SIGKILL.
//
// On Linux this rests on the parent-death signal (PR_SET_PDEATHSIG), which
// the kernel sends when the *thread* that forked the child ends, not the
// process (https://go.dev/issue/27505). A goroutine's thread is whatever the
// scheduler picked, and the runtime ends a thread when a goroutine locked to
// it returns, so a child forked from an arbitrary goroutine can be killed
// early. Start therefore forks every child from one goroutine locked to its
// thread, which lives while any child it started has not been waited for. On
// other systems Start is cmd.Start.
package childproc

import "os/exec"

// Start starts cmd as cmd.Start does, so that it is killed with SIGKILL when
// this process ends (on Linux; elsewhere it is cmd.Start). The caller must
// call wait, instead of cmd.Wait, exactly once; it returns cmd.Wait's error.
// Start sets cmd.SysProcAttr.Pdeathsig on Linux and is safe for concurrent
// use.
func Start(cmd *exec.Cmd) (wait func() error, err error) {
	return start(cmd)
}
