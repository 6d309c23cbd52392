package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ownerFile, in a server's --dir (its working directory), names the test
// process that started the server: "<pid> <start time>". A server whose
// owner is gone is an orphan of an earlier run (its owner was killed before
// the parent-death signal existed, or on a system without one), which the
// first launch of every process kills (sweepOrphans, Linux only).
const ownerFile = "redistest-owner"

var sweepOnce sync.Once

// writeOwner records this process as the owner of the server in dir, and
// on the first call of the process kills the orphans of earlier runs.
func writeOwner(dir string) error {
	sweepOnce.Do(func() { sweepOrphans() })
	id := strconv.Itoa(os.Getpid()) + " " + processStart(os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(id+"\n"), 0o644); err != nil {
		return fmt.Errorf("record the server's owner: %w", err)
	}
	return nil
}

// ownerGone reports whether the owner recorded in an owner file (its
// contents) is not running any more; a file it cannot parse is no owner's.
func ownerGone(contents string) bool {
	f := strings.Fields(contents)
	if len(f) != 2 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return false
	}
	return processStart(pid) != f[1]
}
