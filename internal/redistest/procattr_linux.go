package redistest

import "syscall"

// sysProcAttr asks the kernel to kill the child with SIGKILL if the thread
// that started it dies; a best-effort safety net against orphaned servers
// when a test binary is killed or exits without running cleanups (it is not
// a substitute for Stop or Main).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
