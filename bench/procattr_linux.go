package main

import "syscall"

// childAttr makes the kernel kill a redis-server the suite started when the
// suite dies, so an interrupted run leaves no server behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
