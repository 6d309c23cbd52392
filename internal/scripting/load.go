package scripting

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// loadKey names one script on one node: "" off Cluster, and on Cluster
// too, where every load is sent to every master.
type loadKey struct{ sha, node string }

// loadFlight is one SCRIPT LOAD of a script: the callers that met NOSCRIPT
// while it runs wait for it instead of loading again, and a caller whose
// command was sent before it ended may rely on its success.
type loadFlight struct {
	done chan struct{}    // closed when the load has ended; the fields below are set before
	end  time.Time        // when it ended
	err  error            // its result; on Cluster, the first master's failure
	errs map[string]error // on Cluster, each failed master's error, by address
}

// result is the load's result for a call served by the master at addr (""
// when unknown or off Cluster): only the load on that node decides, so a
// master that is down does not fail calls that do not go to it.
func (f *loadFlight) result(addr string) error {
	if f.errs == nil || addr == "" {
		return f.err
	}
	return f.errs[addr]
}

// IsNoScript reports whether err is Redis saying the script is not loaded
// on the node that answered.
func IsNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// load makes s present on the node serving keys, for a call that met
// NOSCRIPT there with a command sent at sent. Concurrent callers share one
// SCRIPT LOAD per script and node: the first sends it, the others wait for
// its result (or their own context's end). A load that succeeded after sent
// serves a caller that comes later too: by then the script is there (unless
// flushed again since, which the caller's next call then meets, as it
// would after a load of its own, and loads for again). A load that failed for its sender's
// context is tried again by a waiter whose context is alive. shared says
// the load was another caller's: a caller whose retry meets NOSCRIPT again
// after a shared load (the script flushed in between) loads it once more,
// so that sharing never costs a call the single load of its own it had.
//
// On Cluster a load goes to every master: the node that answered NOSCRIPT
// may not be the one go-redis's (possibly stale) slot map names for keys,
// after a migration or a failover, and a node that has the script loses
// nothing by loading it again; so one load serves the callers of every
// node.
func (r *Runner) load(ctx context.Context, s *Script, keys []string, sent time.Time) (shared bool, _ error) {
	k := loadKey{sha: s.sha}
	addr := ""
	if cc := r.cluster; cc != nil && len(keys) > 0 {
		if node, err := cc.MasterForKey(ctx, keys[0]); err == nil {
			addr = node.Options().Addr
		}
	}
	for {
		r.mu.Lock()
		f := r.loading[k]
		if f != nil {
			select {
			case <-f.done:
				if f.end.After(sent) && f.result(addr) == nil {
					r.mu.Unlock()
					return true, nil
				}
				f = nil // ended before this call's command, or failed: load again
			default:
			}
		}
		if f == nil {
			f = &loadFlight{done: make(chan struct{})}
			if r.loading == nil {
				r.loading = make(map[loadKey]*loadFlight)
			}
			r.loading[k] = f
			r.loads++
			r.mu.Unlock()
			errs, err := r.loadNow(ctx, s)
			r.mu.Lock()
			f.err, f.errs, f.end = err, errs, time.Now()
			close(f.done)
			r.mu.Unlock()
			return false, f.result(addr)
		}
		r.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return true, ctx.Err()
		}
		err := f.result(addr)
		if err == nil || ctx.Err() != nil || !isContextErr(err) {
			return true, err
		}
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// loadNow sends the SCRIPT LOAD of s: off Cluster, its result; on Cluster,
// to every master in parallel, each failed master's error by address (a
// non-nil map) and the first failure.
func (r *Runner) loadNow(ctx context.Context, s *Script) (map[string]error, error) {
	r.trip(ctx, 1) // on Cluster, one per master, sent in parallel
	if r.reloaded != nil && r.wasSeen(s) {
		r.reloaded(s.name)
	}
	cc := r.cluster
	if cc == nil {
		err := r.rdb.ScriptLoad(ctx, s.src).Err()
		r.saw(s, err)
		return nil, err
	}
	var mu sync.Mutex
	var anyErr error
	errs := map[string]error{}
	_ = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		if err := node.ScriptLoad(ctx, s.src).Err(); err != nil {
			mu.Lock()
			errs[node.Options().Addr] = err
			if anyErr == nil {
				anyErr = err
			}
			mu.Unlock()
		}
		return nil
	})
	if len(errs) == 0 {
		r.saw(s, nil)
	}
	return errs, anyErr
}
