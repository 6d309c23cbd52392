package scripting

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RunWait calls s like Run, followed in the same pipeline (on the same
// connection, so that WAIT covers the script's writes) by WAIT replicas
// timeout. It returns the script's result and how many replicas
// acknowledged (0 when the WAIT did not run). On Cluster the pipeline goes
// to the key's master directly, so the redirections go-redis would follow
// are followed here: MOVED and ASK to the node they name (ASK with ASKING in
// the same pipeline), TRYAGAIN after a short back-off, within
// slotRetryWindow, as Run does.
func (r *Runner) RunWait(ctx context.Context, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (*redis.Cmd, int64) {
	var target redis.Cmdable = r.rdb
	cc := r.cluster
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
		r.trip(ctx, 1)
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
		case IsNoScript(err) && loads < 2:
			shared, err := r.load(ctx, s, keys, sent)
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
