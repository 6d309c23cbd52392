package redisson

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// script is one embedded Lua script with its SHA1, computed once.
type script struct {
	name string
	src  string // the preludes the script names, then the script
	sha  string // of src
	// shaArg is sha boxed once, for the commands built by argv.
	shaArg any
}

// mustScript returns the script lua/<name>.lua. A line of its header (the
// comment lines it opens with) of the form
//
//	-- prelude: release_latch, ...
//
// names the preludes it uses: lua/prelude_release_latch.lua, ..., joined in
// that order before the script, so that their local functions are defined
// where the script calls them. The script's source, loaded and hashed, is
// the joined text. A missing file is a build defect: mustScript panics.
func mustScript(name string) *script {
	body := mustLua(name)
	var src strings.Builder
	for _, p := range preludesOf(body) {
		src.WriteString(mustLua("prelude_" + p))
	}
	src.WriteString(body)
	sum := sha1.Sum([]byte(src.String()))
	sha := hex.EncodeToString(sum[:])
	return &script{name: name, src: src.String(), sha: sha, shaArg: sha}
}

// mustLua returns the text of lua/<name>.lua, ending in a newline.
func mustLua(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("redisson: missing embedded script " + name) // a build defect, not a runtime condition
	}
	s := string(b)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// preludesOf returns the prelude names of a script's header lines
// "-- prelude: a, b".
func preludesOf(body string) []string {
	var names []string
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "--") {
			break // the header ends at the first line of code
		}
		list, ok := strings.CutPrefix(line, "-- prelude:")
		if !ok {
			continue
		}
		for _, n := range strings.Split(list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

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

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// scriptStats is what tests and benchmarks read of the script runner.
type scriptStats struct {
	loads int // SCRIPT LOADs sent (a load on every master counts once)
}

func (c *scripts) stats() scriptStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return scriptStats{loads: c.loads}
}

// run calls s with EVALSHA and, on NOSCRIPT, loads it and calls once more.
// A refusal that says the script did not run because its slot is being
// migrated (TRYAGAIN, or a redirection go-redis gave up following) is
// retried with a short backoff for up to slotRetryWindow.
func (c *scripts) run(ctx context.Context, s *script, keys []string, args ...any) *redis.Cmd {
	return c.runArgv(ctx, s, keys, nil, args)
}

// argv returns a new EVALSHA command line of s, "evalsha", its SHA, the key
// count and keys (the call's KEYS, boxed once by the caller), with room for
// n arguments: the caller appends them and passes the whole line to
// runArgv. It is the line go-redis's EvalSha builds, with nothing boxed
// again.
func (s *script) argv(keys []any, n int) []any {
	a := make([]any, 3+len(keys), 3+len(keys)+n)
	a[0], a[1], a[2] = evalShaArg, s.shaArg, len(keys)
	copy(a[3:], keys)
	return a
}

var evalShaArg any = "evalsha"

// int64s is cmd.Int64Slice appending to dst: a reply of integers is read
// without a slice of its own when dst has room. Any other reply is left to
// Int64Slice, for its result and errors.
func int64s(cmd *redis.Cmd, dst []int64) ([]int64, error) {
	if cmd.Err() == nil {
		if vals, ok := cmd.Val().([]any); ok {
			out := dst
			for _, v := range vals {
				n, ok := v.(int64)
				if !ok {
					return cmd.Int64Slice()
				}
				out = append(out, n)
			}
			return out, nil
		}
	}
	return cmd.Int64Slice()
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

// plainArg reports whether go-redis sends a lone argument as it is (its
// EvalSha flattens a slice, a map or a struct into several).
func plainArg(a any) bool {
	switch a.(type) {
	case string, []byte, int, int64, uint64, int32, uint32, float64, bool:
		return true
	}
	return false
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

// load makes s present on the node serving keys, for a call that met
// NOSCRIPT there with a command sent at sent. Concurrent callers share one
// SCRIPT LOAD per script and node: the first sends it, the others wait for
// its result (or their own context's end). A load that succeeded after sent
// serves a caller that comes later too: by then the script is there (unless
// flushed again since, which the caller's single retry then reports, as it
// would after a load of its own). A load that failed for its sender's
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
func (c *scripts) load(ctx context.Context, s *script, keys []string, sent time.Time) (shared bool, _ error) {
	k := loadKey{sha: s.sha}
	addr := ""
	if cc := c.topo.cluster; cc != nil && len(keys) > 0 {
		if node, err := cc.MasterForKey(ctx, keys[0]); err == nil {
			addr = node.Options().Addr
		}
	}
	for {
		c.mu.Lock()
		f := c.loading[k]
		if f != nil {
			select {
			case <-f.done:
				if f.end.After(sent) && f.result(addr) == nil {
					c.mu.Unlock()
					return true, nil
				}
				f = nil // ended before this call's command, or failed: load again
			default:
			}
		}
		if f == nil {
			f = &loadFlight{done: make(chan struct{})}
			if c.loading == nil {
				c.loading = make(map[loadKey]*loadFlight)
			}
			c.loading[k] = f
			c.loads++
			c.mu.Unlock()
			errs, err := c.loadNow(ctx, s)
			c.mu.Lock()
			f.err, f.errs, f.end = err, errs, time.Now()
			close(f.done)
			c.mu.Unlock()
			return false, f.result(addr)
		}
		c.mu.Unlock()
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
func (c *scripts) loadNow(ctx context.Context, s *script) (map[string]error, error) {
	c.trip(ctx, 1) // on Cluster, one per master, sent in parallel
	c.emit.emit(Event{Type: EventScriptReloaded, Name: s.name})
	cc := c.topo.cluster
	if cc == nil {
		return nil, c.rdb.ScriptLoad(ctx, s.src).Err()
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
	return errs, anyErr
}

// call is one script invocation inside a pipeline.
type call struct {
	s    *script
	keys []string
	args []any
	cmd  *redis.Cmd
}

// runPipelined sends all calls in one pipeline (grouped per node by go-redis
// on Cluster). Calls that failed with NOSCRIPT have their script loaded on the
// node that answered and are sent once more, again pipelined. Each call's
// result is left in its cmd field; the error returned is the first transport
// error, if any.
func (c *scripts) runPipelined(ctx context.Context, calls []*call) error {
	sent := time.Now()
	err := c.pipeline(ctx, calls)
	var retry []*call
	for _, cl := range calls {
		if isNoScript(cl.cmd.Err()) {
			retry = append(retry, cl)
		}
	}
	if len(retry) == 0 {
		return err
	}
	loaded := make(map[string]bool) // script name + node key
	for _, cl := range retry {
		k := cl.s.sha
		if len(cl.keys) > 0 {
			k += "\x00" + c.nodeKey(ctx, cl.keys[0])
		}
		if loaded[k] {
			continue
		}
		if _, lerr := c.load(ctx, cl.s, cl.keys, sent); lerr != nil {
			return lerr
		}
		loaded[k] = true
	}
	return c.pipeline(ctx, retry)
}

func (c *scripts) pipeline(ctx context.Context, calls []*call) error {
	pipe := c.rdb.Pipeline()
	for _, cl := range calls {
		cl.cmd = pipe.EvalSha(ctx, cl.s.sha, cl.keys, cl.args...)
	}
	c.trip(ctx, 1)
	_, err := pipe.Exec(ctx)
	// Exec reports the first failed command; script errors are per call.
	if err != nil && !mayHaveRun(err) {
		return nil
	}
	return err
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
