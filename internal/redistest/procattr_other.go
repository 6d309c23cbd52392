//go:build !linux

package redistest

import "syscall"

// sysProcAttr returns the default process attributes on non-Linux systems.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
