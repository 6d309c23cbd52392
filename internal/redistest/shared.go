package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

// mainActive is set by Main; Shared and SharedCluster refuse to run without
// it, since nothing else would stop their servers.
var mainActive atomic.Bool

// lazy is a per-process instance started on first use; a failure is
// remembered and reported to every caller.
type lazy[T any] struct {
	mu   sync.Mutex
	done bool
	val  T
	dir  string
	err  error
}

var (
	sharedServer  lazy[*Server]
	sharedCluster lazy[*Cluster]
)

// get returns the instance, starting it with start(dir) on first use.
func (l *lazy[T]) get(tb testing.TB, name string, start func(dir string) (T, error)) T {
	tb.Helper()
	if !mainActive.Load() {
		tb.Fatalf("redistest: %s needs the package's TestMain to call redistest.Main(m), "+
			"which stops shared servers after the tests", name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.done = true
		l.dir, l.err = os.MkdirTemp("", "redistest-shared-")
		if l.err == nil {
			l.val, l.err = start(l.dir)
		}
		if l.err != nil {
			l.err = fmt.Errorf("redistest: starting %s: %w", name, l.err)
		}
	}
	if l.err != nil {
		tb.Fatalf("%v", l.err)
	}
	return l.val
}

// stop stops the instance (if started) with stopFn and removes its directory.
func (l *lazy[T]) stop(stopFn func(T)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		return
	}
	stopFn(l.val)
	if l.dir != "" {
		_ = os.RemoveAll(l.dir)
	}
}

// Shared returns a redis-server shared by all tests of the test binary,
// started on first use. Tests using it must use unique keys (it is never
// flushed) and must not stop, kill, pause or restart it. If starting it
// fails, every caller fails. The package's TestMain must call Main, which
// stops it; Shared fails the test otherwise.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	return sharedServer.get(tb, "Shared", func(dir string) (*Server, error) {
		bin, _, err := findBinaries()
		if err != nil {
			return nil, err
		}
		return newServer(bin, dir, nil)
	})
}

// SharedCluster returns a 3-master, 0-replica cluster shared by all tests of
// the test binary, started on first use, under the same rules as Shared
// (unique keys, no stopping or failover; TestMain must call Main).
func SharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	return sharedCluster.get(tb, "SharedCluster", func(dir string) (*Cluster, error) {
		bin, cli, err := findBinaries()
		if err != nil {
			return nil, err
		}
		c, err := startCluster(bin, cli, filepath.Join(dir, "cluster"), 3, 0)
		if err != nil && c != nil {
			c.Stop()
		}
		return c, err
	})
}

// Main is meant to be called from a package's TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// It runs the tests, stops the servers and clusters returned by Shared and
// SharedCluster and removes their directories, then, if the tests passed,
// checks for leaked goroutines with goleak.Find(opts...) (retrying for a
// while, like goleak.VerifyTestMain) and fails the run if any remain.
// Finally it exits with the resulting code. Packages that use Shared or
// SharedCluster must use Main; packages that do not may still use it for
// the leak check. Do not combine it with goleak.VerifyTestMain.
func Main(m *testing.M, opts ...goleak.Option) {
	mainActive.Store(true)
	code := m.Run()
	mainActive.Store(false)
	sharedServer.stop(func(s *Server) {
		if s != nil {
			s.Stop()
		}
	})
	sharedCluster.stop(func(c *Cluster) {
		if c != nil {
			c.Stop()
		}
	})
	if code == 0 {
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
