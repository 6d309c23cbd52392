package redistest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// processStart returns the start time of process pid (field 22 of
// /proc/<pid>/stat, in clock ticks since boot), which with the pid names a
// process uniquely; "" if there is no such process.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 20 || f[0] == "Z" {
		return ""
	}
	return f[19]
}

// sweepOrphans kills (SIGKILL) every redis or valkey process whose working
// directory holds an owner file naming a process that is gone, and returns
// their pids. Servers of live test processes, this one's included, are
// never touched, nor any process without an owner file.
func sweepOrphans() (killed []int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		proc := "/proc/" + e.Name()
		exe, err := os.Readlink(proc + "/exe")
		if err != nil {
			continue
		}
		name := filepath.Base(exe)
		if !strings.Contains(name, "redis") && !strings.Contains(name, "valkey") {
			continue
		}
		cwd, err := os.Readlink(proc + "/cwd")
		if err != nil {
			continue
		}
		owner, err := os.ReadFile(filepath.Join(cwd, ownerFile))
		if err != nil || !ownerGone(string(owner)) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}
