//go:build !linux

package redistest

import "strconv"

// processStart returns the pid as a string: without /proc there is no start
// time to tell a reused pid apart.
func processStart(pid int) string { return strconv.Itoa(pid) }

// sweepOrphans does nothing where there is no /proc to find them in.
func sweepOrphans() (killed []int) { return nil }
