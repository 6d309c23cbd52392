// Package scripting runs the library's Lua scripts on Redis. It is the
// engine behind the root package's script runner (scriptcache.go), which
// builds one Runner per Client from the client's topology and options.
//
// A Runner sends EVALSHA only: the full script body never travels with a
// call, except in an atomic batch (RunBatch), whose scripts go with EVAL
// inside MULTI/EXEC. A script missing on the node that answered (NOSCRIPT: after SCRIPT
// FLUSH, a restart, a failover, or a node seen for the first time) is loaded
// with SCRIPT LOAD (on Cluster on every master) and the call retried once. A
// call refused before it ran because its slot is being migrated (TRYAGAIN,
// MOVED, ASK) is retried for up to 3 s. A call whose context has already
// ended is not sent and says so (NotSentError). With Config.Lanes, the
// calls of goroutines sharing a Runner that queue up are sent as one
// pipeline (autopipe.go); on a Cluster, one pipeline per master, each
// master's calls queueing only behind its own (nodepipes.go). On a Cluster
// every pipeline (the auto-pipeline's, RunPipelined's, a non-atomic
// RunBatch's) goes through the masters' own clients, never a go-redis
// Cluster pipeline (noderouter.go).
//
// The package knows nothing of the library's objects, errors or Observer:
// what it needs of them comes through Config.
package scripting

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config is what a Runner works with.
type Config struct {
	// Redis sends every command.
	Redis redis.UniversalClient
	// Cluster is Redis as a Cluster client, nil on a single node or
	// Sentinel: loads then go to every master, and RunWait follows
	// redirections itself.
	Cluster *redis.ClusterClient
	// Lanes is the number of sends in flight beyond which calls queue and
	// go out as one pipeline (with Cluster, per master); 0 turns the
	// auto-pipeline off.
	Lanes int
	// CountTrips, when not nil, is told of the round trips a call makes,
	// with the call's context (the operation it belongs to rides in it).
	CountTrips func(ctx context.Context, n int)
	// Reloaded, when not nil, is told of each SCRIPT LOAD after NOSCRIPT
	// of a script this Runner had loaded or run before (flushed since, or
	// on a node that took over after a failover), with the script's name,
	// before it is sent. A script's first load is not a reload: a client
	// that starts loads every script once, and that is no event.
	Reloaded func(name string)
}

// Runner runs scripts with EVALSHA. It is safe for concurrent use and has
// nothing to close: a call queued for the auto-pipeline goes out with the
// next lane that frees.
type Runner struct {
	rdb        redis.UniversalClient
	cluster    *redis.ClusterClient
	countTrips func(ctx context.Context, n int)
	reloaded   func(name string)
	// pipe batches the EVALSHAs of concurrent calls (autopipe.go); nil
	// without lanes.
	pipe *autoPipe
	// route sends the pipelines on a Cluster, through the masters' own
	// clients (noderouter.go); nil elsewhere.
	route *nodeRouter
	// nodes is the auto-pipeline on a Cluster, one pipe per master
	// (nodepipes.go); nil elsewhere or without lanes.
	nodes *nodePipes
	// loads counts SCRIPT LOADs (tests read it); loading holds the latest
	// load of each script on each node (see load). Both under mu.
	mu      sync.Mutex
	loads   int
	loading map[loadKey]*loadFlight
	// seen holds the SHA of every script this Runner loaded or ran (a
	// reply other than NOSCRIPT): a NOSCRIPT for one of them is a reload.
	seen sync.Map
}

// NewRunner returns a Runner working as cfg says. It does no I/O.
func NewRunner(cfg Config) *Runner {
	r := &Runner{rdb: cfg.Redis, cluster: cfg.Cluster, countTrips: cfg.CountTrips, reloaded: cfg.Reloaded}
	if cfg.Cluster != nil {
		r.route = &nodeRouter{cluster: cfg.Cluster}
	}
	switch {
	case cfg.Lanes > 0 && cfg.Cluster != nil:
		r.nodes = newNodePipes(r.route, cfg.Lanes)
	case cfg.Lanes > 0:
		r.pipe = newAutoPipe(cfg.Redis, cfg.Lanes)
	}
	return r
}

// NotSentError is the error of a call never sent, because its context had
// already ended: Redis is untouched and there is nothing to undo. It
// matches the context's error.
type NotSentError struct{ err error }

func (e NotSentError) Error() string { return e.err.Error() }

// Unwrap returns the context's error.
func (e NotSentError) Unwrap() error { return e.err }

// Run calls s with EVALSHA on keys and args and, on NOSCRIPT, loads it and
// calls again (at most noScriptLoads times). A refusal that says the script did not run because its
// slot is being migrated (TRYAGAIN, or a redirection go-redis gave up
// following) is retried with a short backoff for up to slotRetryWindow.
func (r *Runner) Run(ctx context.Context, s *Script, keys []string, args ...any) *redis.Cmd {
	return r.RunArgv(ctx, s, keys, nil, args)
}

// RunArgv is Run for argv, a command line of s from Script.Argv whose KEYS
// are keys; with argv nil, the line is built from keys and args as go-redis
// builds it.
func (r *Runner) RunArgv(ctx context.Context, s *Script, keys []string, argv, args []any) *redis.Cmd {
	if err := ctx.Err(); err != nil {
		// go-redis sends nothing on a context that already ended: the call
		// cannot have run, and nothing needs undoing.
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(NotSentError{err})
		return cmd
	}
	cmd := r.runOnce(ctx, s, keys, argv, args)
	if !isMigrating(cmd.Err()) {
		return cmd
	}
	deadline := time.Now().Add(slotRetryWindow)
	for backoff := 5 * time.Millisecond; isMigrating(cmd.Err()) && time.Now().Before(deadline); backoff = min(2*backoff, 100*time.Millisecond) {
		if !sleepCtx(ctx, backoff) {
			cmd.SetErr(ctx.Err()) // the caller's context ended, not the migration
			return cmd
		}
		cmd = r.runOnce(ctx, s, keys, argv, args)
	}
	return cmd
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// slotRetryWindow bounds how long a call refused during a slot migration
// is retried: resharding keeps a slot in its mixed state only while it
// moves that slot's keys.
const slotRetryWindow = 3 * time.Second

// isMigrating reports a refusal sent before the script ran, because its
// keys were in a slot being migrated.
func isMigrating(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "TRYAGAIN") || strings.HasPrefix(msg, "ASK ") || strings.HasPrefix(msg, "MOVED ")
}

// evalSha sends one EVALSHA of s: argv when not nil, else the line of keys
// and args. A single argument goes through go-redis's EvalSha, which
// flattens a slice, map or struct into several.
func (r *Runner) evalSha(ctx context.Context, s *Script, keys []string, argv, args []any) *redis.Cmd {
	if argv == nil {
		if len(args) == 1 && !plainArg(args[0]) {
			return r.rdb.EvalSha(ctx, s.sha, keys, args...)
		}
		argv = s.Argv(nil, len(keys)+len(args))
		for _, k := range keys {
			argv = append(argv, k)
		}
		argv[2] = len(keys)
		argv = append(argv, args...)
	}
	cmd := redis.NewCmd(ctx, argv...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3) // as EvalSha: routes the call by its first key
	}
	switch {
	case r.nodes != nil:
		r.nodes.process(ctx, cmd, len(keys) > 0)
	case r.pipe != nil:
		r.pipe.process(ctx, cmd, len(keys) > 0)
	default:
		_ = r.rdb.Process(ctx, cmd)
	}
	return cmd
}

func (r *Runner) runOnce(ctx context.Context, s *Script, keys []string, argv, args []any) *redis.Cmd {
	sent := time.Now()
	cmd := r.evalShaTrip(ctx, s, keys, argv, args)
	if !IsNoScript(cmd.Err()) {
		r.saw(s, cmd.Err())
		return cmd
	}
	// Each NOSCRIPT gets a load (its own, or one that ended after the call
	// was sent) and one more call, up to noScriptLoads times: a flush can
	// land between a load and the call after it, and only a flush that
	// keeps doing so reaches the caller.
	for i := 0; i < noScriptLoads && IsNoScript(cmd.Err()); i++ {
		if _, err := r.load(ctx, s, keys, sent); err != nil {
			cmd.SetErr(err)
			return cmd
		}
		sent = time.Now()
		cmd = r.evalShaTrip(ctx, s, keys, argv, args)
	}
	return cmd
}

// noScriptLoads bounds the loads one call makes for NOSCRIPT replies.
const noScriptLoads = 3

// evalShaTrip is evalSha counting its round trip, unless the call was never
// sent (its context ended while it queued for the auto-pipeline): a call
// sent in a pipeline is one round trip of its operation all the same.
func (r *Runner) evalShaTrip(ctx context.Context, s *Script, keys []string, argv, args []any) *redis.Cmd {
	cmd := r.evalSha(ctx, s, keys, argv, args)
	if r.countTrips != nil {
		var notSent NotSentError
		if !errors.As(cmd.Err(), &notSent) {
			r.countTrips(ctx, 1)
		}
	}
	return cmd
}

// saw marks s as present on the server when err, the result of its call
// or load, is nil.
func (r *Runner) saw(s *Script, err error) {
	if err != nil {
		return
	}
	if _, ok := r.seen.Load(s.sha); !ok {
		r.seen.Store(s.sha, struct{}{})
	}
}

// wasSeen reports whether s was loaded or ran through this Runner before.
func (r *Runner) wasSeen(s *Script) bool {
	_, ok := r.seen.Load(s.sha)
	return ok
}

// trip counts n round trips for the operation ctx belongs to, if counted.
func (r *Runner) trip(ctx context.Context, n int) {
	if r.countTrips != nil {
		r.countTrips(ctx, n)
	}
}
