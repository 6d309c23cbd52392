package redisson

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// scripts runs embedded scripts with EVALSHA only. A script missing on the
// node that answered (NOSCRIPT: after SCRIPT FLUSH, a restart, a failover, or a
// node seen for the first time) is loaded on that node with SCRIPT LOAD and the
// call retried once. The full script body never travels with a call.
type scripts struct {
	rdb  redis.UniversalClient
	topo topology
	emit *emitter
	// observed: an Observer is set, so calls count their round trips in
	// the operation record their context carries.
	observed bool
	// pipe batches the EVALSHAs of concurrent calls (autopipe.go); nil
	// with Options.DisableAutoPipeline.
	pipe *autoPipe
	// loads counts SCRIPT LOADs (see stats); loading holds the latest
	// load of each script on each node (see load). Both under mu.
	mu      sync.Mutex
	loads   int
	loading map[loadKey]*loadFlight
}

// run calls s with EVALSHA and, on NOSCRIPT, loads it and calls once more.
// A refusal that says the script did not run because its slot is being
// migrated (TRYAGAIN, or a redirection go-redis gave up following) is
// retried with a short backoff for up to slotRetryWindow.
func (c *scripts) run(ctx context.Context, s *script, keys []string, args ...any) *redis.Cmd {
	return c.runArgv(ctx, s, keys, nil, args)
}

// runArgv is run for argv, a command line of s from argv whose KEYS are
// keys; with argv nil, the line is built from keys and args as go-redis
// builds it.
func (c *scripts) runArgv(ctx context.Context, s *script, keys []string, argv, args []any) *redis.Cmd {
	if err := ctx.Err(); err != nil {
		// go-redis sends nothing on a context that already ended: the call
		// cannot have run, and nothing needs undoing (see mayHaveRun).
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(notSentError{err})
		return cmd
	}
	cmd := c.runOnce(ctx, s, keys, argv, args)
	if !isMigrating(cmd.Err()) {
		return cmd
	}
	deadline := time.Now().Add(slotRetryWindow)
	for backoff := 5 * time.Millisecond; isMigrating(cmd.Err()) && time.Now().Before(deadline); backoff = min(2*backoff, 100*time.Millisecond) {
		if !sleepCtx(ctx, backoff) {
			cmd.SetErr(ctx.Err()) // the caller's context ended, not the migration
			return cmd
		}
		cmd = c.runOnce(ctx, s, keys, argv, args)
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
func (c *scripts) evalSha(ctx context.Context, s *script, keys []string, argv, args []any) *redis.Cmd {
	if argv == nil {
		if len(args) == 1 && !plainArg(args[0]) {
			return c.rdb.EvalSha(ctx, s.sha, keys, args...)
		}
		argv = s.argv(nil, len(keys)+len(args))
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
	if c.pipe != nil {
		c.pipe.process(ctx, cmd, len(keys) > 0)
	} else {
		_ = c.rdb.Process(ctx, cmd)
	}
	return cmd
}

func (c *scripts) runOnce(ctx context.Context, s *script, keys []string, argv, args []any) *redis.Cmd {
	sent := time.Now()
	cmd := c.evalShaTrip(ctx, s, keys, argv, args)
	if !isNoScript(cmd.Err()) {
		return cmd
	}
	shared, err := c.load(ctx, s, keys, sent)
	if err != nil {
		cmd.SetErr(err)
		return cmd
	}
	sent = time.Now()
	cmd = c.evalShaTrip(ctx, s, keys, argv, args)
	if !shared || !isNoScript(cmd.Err()) {
		return cmd
	}
	// Another caller's load served this one, and the script is gone again
	// (flushed since): load it as if none had.
	if _, err := c.load(ctx, s, keys, sent); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	return c.evalShaTrip(ctx, s, keys, argv, args)
}

// evalShaTrip is evalSha counting its round trip, unless the call was never
// sent (its context ended while it queued for the auto-pipeline): a call
// sent in a pipeline is one round trip of its operation all the same.
func (c *scripts) evalShaTrip(ctx context.Context, s *script, keys []string, argv, args []any) *redis.Cmd {
	cmd := c.evalSha(ctx, s, keys, argv, args)
	if c.observed {
		var notSent notSentError
		if !errors.As(cmd.Err(), &notSent) {
			countTrips(ctx, 1)
		}
	}
	return cmd
}

// trip counts n round trips for the operation ctx belongs to, if observed.
func (c *scripts) trip(ctx context.Context, n int) {
	if c.observed {
		countTrips(ctx, n)
	}
}

// runWait calls s like run, followed in the same pipeline (on the same
// connection, so that WAIT covers the script's writes) by WAIT replicas
// timeout. It returns the script's result and how many replicas
// acknowledged (0 when the WAIT did not run). On Cluster the pipeline goes
// to the key's master directly, so the redirections go-redis would follow
// are followed here: MOVED and ASK to the node they name (ASK with ASKING in
// the same pipeline), TRYAGAIN after a short back-off, within
// slotRetryWindow, as run does.
func (c *scripts) runWait(ctx context.Context, s *script, keys []string, replicas int, timeout time.Duration, args ...any) (*redis.Cmd, int64) {
	var target redis.Cmdable = c.rdb
	cc := c.topo.cluster
	if cc != nil && len(keys) > 0 {
		node, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd, 0
		}
		target = node
	} else {
		cc = nil
	}
	asking := false
	var sent time.Time
	send := func() (*redis.Cmd, *redis.IntCmd) {
		sent = time.Now()
		pipe := target.Pipeline()
		if asking {
			_ = pipe.Process(ctx, redis.NewStatusCmd(ctx, "asking"))
		}
		cmd := pipe.EvalSha(ctx, s.sha, keys, args...)
		wait := redis.NewIntCmd(ctx, "wait", replicas, timeout.Milliseconds())
		_ = pipe.Process(ctx, wait)
		c.trip(ctx, 1)
		_, _ = pipe.Exec(ctx)
		return cmd, wait
	}
	cmd, wait := send()
	deadline := time.Now().Add(slotRetryWindow)
	backoff := 5 * time.Millisecond
	loads, redirects := 0, 0 // loads: 2 once a load of its own or two shared ones were tried (see runOnce)
	for {
		err := cmd.Err()
		switch {
		case isNoScript(err) && loads < 2:
			shared, err := c.load(ctx, s, keys, sent)
			if err != nil {
				cmd.SetErr(err)
				return cmd, 0
			}
			loads++
			if !shared {
				loads = 2
			}
		case cc != nil && isMigrating(err) && time.Now().Before(deadline):
			node, ask := redirectNode(ctx, cc, err)
			if node != nil && redirects < 3 {
				redirects++
				target, asking = node, ask
				break
			}
			if !sleepCtx(ctx, backoff) {
				cmd.SetErr(ctx.Err())
				return cmd, 0
			}
			backoff = min(2*backoff, 100*time.Millisecond)
			redirects, asking = 0, false
		default:
			return cmd, wait.Val()
		}
		cmd, wait = send()
	}
}

// redirectNode returns the node a MOVED or ASK refusal names, if the
// cluster client knows it, and whether it was an ASK. A MOVED also has
// go-redis refresh its slot map for later calls.
func redirectNode(ctx context.Context, cc *redis.ClusterClient, err error) (*redis.Client, bool) {
	f := strings.Fields(err.Error())
	if len(f) != 3 || (f[0] != "MOVED" && f[0] != "ASK") {
		return nil, false
	}
	if f[0] == "MOVED" {
		cc.ReloadState(ctx)
	}
	var mu sync.Mutex
	var found *redis.Client
	_ = cc.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
		if n.Options().Addr == f[2] {
			mu.Lock()
			found = n
			mu.Unlock()
		}
		return nil
	})
	return found, f[0] == "ASK"
}

// nodeKey names the node that serves key on Cluster, "" elsewhere.
func (c *scripts) nodeKey(ctx context.Context, key string) string {
	cc := c.topo.cluster
	if cc == nil {
		return ""
	}
	node, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return key
	}
	return node.Options().Addr
}
