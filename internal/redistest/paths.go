// Package redistest starts real redis-server processes on free loopback ports
// for tests: single servers (Start), Redis Cluster deployments
// (StartCluster), per-test-binary shared instances (Shared, SharedCluster)
// and an in-process TCP proxy for fault injection (NewProxy).
//
// Servers started with Start and StartCluster belong to one test and are
// stopped through tb.Cleanup. Shared and SharedCluster return instances that
// outlive individual tests, so a package that uses them MUST call Main from
// its TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// Main runs the tests, stops the shared servers and clusters, then checks for
// leaked goroutines with go.uber.org/goleak (see Main).
//
// Every server runs with --bind 127.0.0.1 --save "" --appendonly no
// --protected-mode no, so nothing is persisted. The harness never touches a
// server it did not start (in particular not a system server on port 6379).
package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	installOnce sync.Once
	installErr  error

	versionOnce  sync.Once
	versionMajor int // major version of redis-server; 0 if unknown
)

// ServerEnv names the environment variable that selects the server binary
// the tests run: an absolute path to a redis-server or valkey-server (a
// symlink is fine). Sentinels run the same binary with --sentinel, and
// clusters are created with the redis-cli or valkey-cli next to it (or the
// one in PATH). Unset or empty, the binaries are looked up as ServerPath
// says. make test-servers sets it once per server.
const ServerEnv = "REDISSON_REDIS_SERVER"

// ServerPath returns the paths of the server and redis-cli binaries. When
// the environment variable ServerEnv is set, the server is the binary it
// names and the cli the redis-cli or valkey-cli in the same directory
// (otherwise the one in PATH); a ServerEnv that is not an absolute path to an
// executable fails the test. Without it, ServerPath looks for redis-server
// and redis-cli in PATH, /usr/bin and /usr/local/bin. When either is missing
// and the test process runs as root with apt-get available, it runs
// "apt-get update" and "apt-get install -y redis-server" (at most once per
// process) and looks again. If the binaries are still missing the test fails
// with tb.Fatalf explaining what to install; it never skips.
func ServerPath(tb testing.TB) (server, cli string) {
	tb.Helper()
	server, cli, err := findBinaries()
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return server, cli
}

// findBinaries is ServerPath without a testing.TB, for the shared instances.
func findBinaries() (server, cli string, err error) {
	if env := os.Getenv(ServerEnv); env != "" {
		return envBinaries(env)
	}
	server, cli = lookup("redis-server"), lookup("redis-cli")
	if server != "" && cli != "" {
		return server, cli, nil
	}
	installOnce.Do(func() { installErr = aptInstall() })
	server, cli = lookup("redis-server"), lookup("redis-cli")
	if server != "" && cli != "" {
		return server, cli, nil
	}
	var missing []string
	if server == "" {
		missing = append(missing, "redis-server")
	}
	if cli == "" {
		missing = append(missing, "redis-cli")
	}
	msg := fmt.Sprintf("redistest: %s not found in PATH, /usr/bin or /usr/local/bin: "+
		"install redis-server (Debian: apt-get install -y redis-server; it also provides redis-cli; "+
		"macOS: brew install redis), version 7 or newer recommended",
		strings.Join(missing, " and "))
	if installErr != nil {
		msg += "; automatic installation failed: " + installErr.Error()
	}
	return "", "", errors.New(msg)
}

// envBinaries returns the server ServerEnv names and the cli beside it.
func envBinaries(server string) (string, string, error) {
	if !filepath.IsAbs(server) {
		return "", "", fmt.Errorf("redistest: %s=%q is not an absolute path", ServerEnv, server)
	}
	if !executable(server) {
		return "", "", fmt.Errorf("redistest: %s=%q is not an executable file", ServerEnv, server)
	}
	dir := filepath.Dir(server)
	for _, name := range []string{"redis-cli", "valkey-cli"} {
		if p := filepath.Join(dir, name); executable(p) {
			return server, p, nil
		}
	}
	if cli := lookup("redis-cli"); cli != "" {
		return server, cli, nil
	}
	if cli := lookup("valkey-cli"); cli != "" {
		return server, cli, nil
	}
	return "", "", fmt.Errorf("redistest: no redis-cli or valkey-cli next to %s=%q nor in PATH", ServerEnv, server)
}

// executable reports whether p is a regular file (after symlinks) with an
// execute bit.
func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// lookup finds an executable named name in PATH, /usr/bin or /usr/local/bin.
func lookup(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/bin", "/usr/local/bin"} {
		if p := filepath.Join(dir, name); executable(p) {
			return p
		}
	}
	return ""
}

// aptInstall installs redis-server with apt-get when running as root.
func aptInstall() error {
	if os.Geteuid() != 0 {
		return errors.New("not running as root, not trying apt-get")
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return errors.New("apt-get not available")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, args := range [][]string{{"update"}, {"install", "-y", "redis-server"}} {
		cmd := exec.CommandContext(ctx, apt, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, tailLines(string(out), 20))
		}
	}
	return nil
}

var versionRE = regexp.MustCompile(`v=(\d+)\.`)

// serverMajorVersion returns the major version of the redis-server binary,
// or 0 when it cannot be determined. The result is cached per process.
func serverMajorVersion(server string) int {
	versionOnce.Do(func() {
		out, err := exec.Command(server, "--version").Output()
		if err != nil {
			return
		}
		if m := versionRE.FindSubmatch(out); m != nil {
			versionMajor, _ = strconv.Atoi(string(m[1]))
		}
	})
	return versionMajor
}

// tailLines returns the last n lines of s.
func tailLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines omitted)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// RequireServer marks a test of a feature (what) that servers older than
// major lack. In a compatibility run, where ServerEnv names the binary
// (make test-servers), the test is skipped on an older server, saying so;
// .ci/test-servers lists each server's skipped tests beside its result. In
// the default run (ServerEnv unset) an older server fails the test with
// what to install instead: the default run never skips.
func RequireServer(tb testing.TB, major int, what string) {
	tb.Helper()
	server, _ := ServerPath(tb)
	v := serverMajorVersion(server)
	if v == 0 || v >= major {
		return
	}
	if os.Getenv(ServerEnv) != "" {
		tb.Skipf("redistest: %s needs a server of version %d or later; %s is version %d", what, major, server, v)
	}
	tb.Fatalf("redistest: %s needs a server of version %d or later; %s is version %d: install Redis %d or later, or name one in %s",
		what, major, server, v, major, ServerEnv)
}

// ServerMajor returns the major version of the server binary the tests
// run (0 when it cannot tell), for a test whose expected result differs
// between server versions.
func ServerMajor(tb testing.TB) int {
	tb.Helper()
	server, _ := ServerPath(tb)
	return serverMajorVersion(server)
}
