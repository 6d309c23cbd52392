package scripting

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Call is one script invocation inside a pipeline, or, with Script nil, a
// plain command whose line (name first, its key second) is Args:
// RunPipelined and RunBatch leave its result in Cmd.
type Call struct {
	Script *Script
	Keys   []string
	Args   []any
	Cmd    *redis.Cmd
}

// RunPipelined sends all calls in one pipeline (on Cluster one per master,
// the masters' at once, through nodeRouter). Calls that failed with NOSCRIPT have their script
// loaded on the node that answered and are sent once more, again pipelined.
// Each call's result is left in its Cmd; the error returned is the first
// transport error, if any.
func (r *Runner) RunPipelined(ctx context.Context, calls []Call) error {
	sent := time.Now()
	err := r.pipeline(ctx, calls)
	var retry []Call
	var at []int // retry[i] is calls[at[i]]
	for i := range calls {
		if IsNoScript(calls[i].Cmd.Err()) {
			retry = append(retry, calls[i])
			at = append(at, i)
		}
	}
	if len(retry) == 0 {
		return err
	}
	loaded := make(map[string]bool) // script name + node key
	for _, cl := range retry {
		k := cl.Script.sha
		if len(cl.Keys) > 0 {
			k += "\x00" + r.nodeKey(ctx, cl.Keys[0])
		}
		if loaded[k] {
			continue
		}
		if _, lerr := r.load(ctx, cl.Script, cl.Keys, sent); lerr != nil {
			return lerr
		}
		loaded[k] = true
	}
	err = r.pipeline(ctx, retry)
	for i, j := range at {
		calls[j].Cmd = retry[i].Cmd
	}
	return err
}

// pipeline sends calls, scripts as EVALSHA, in one pipeline; on Cluster in
// one per master (nodeRouter).
func (r *Runner) pipeline(ctx context.Context, calls []Call) error {
	if r.route == nil {
		return r.send(ctx, r.rdb.Pipeline(), calls, false)
	}
	// A pipeline never sent builds the commands as go-redis would send them.
	queue(ctx, r.rdb.Pipeline(), calls, false)
	cmds := make([]redis.Cmder, len(calls))
	keys := make([]string, len(calls))
	for i := range calls {
		cmds[i], keys[i] = calls[i].Cmd, calls[i].key()
	}
	r.trip(ctx, 1)
	r.route.pipeline(ctx, cmds, keys)
	for _, c := range cmds {
		if err := c.Err(); MayHaveRun(err) {
			return err
		}
	}
	return nil
}

// key returns the key that routes cl on Cluster: its script's first key,
// a plain command's second word; "" for none.
func (cl *Call) key() string {
	if cl.Script != nil {
		if len(cl.Keys) > 0 {
			return cl.Keys[0]
		}
		return ""
	}
	if len(cl.Args) > 1 {
		if k, ok := cl.Args[1].(string); ok {
			return k
		}
	}
	return ""
}

// send queues calls on pipe (see queue) and sends them in one round trip.
func (r *Runner) send(ctx context.Context, pipe redis.Pipeliner, calls []Call, withSource bool) error {
	queue(ctx, pipe, calls, withSource)
	r.trip(ctx, 1)
	_, err := pipe.Exec(ctx)
	// Exec reports the first failed command; Redis's errors are per call.
	if err != nil && !MayHaveRun(err) {
		return nil
	}
	return err
}

// queue queues calls on pipe, scripts as EVALSHA (with the full source,
// EVAL, when withSource) and plain commands as they are, leaving each
// call's command in its Cmd.
func queue(ctx context.Context, pipe redis.Pipeliner, calls []Call, withSource bool) {
	for i := range calls {
		cl := &calls[i]
		switch {
		case cl.Script == nil:
			cl.Cmd = plainCmd(ctx, cl.Args)
			_ = pipe.Process(ctx, cl.Cmd)
		case withSource:
			cl.Cmd = pipe.Eval(ctx, cl.Script.src, cl.Keys, cl.Args...)
		default:
			cl.Cmd = pipe.EvalSha(ctx, cl.Script.sha, cl.Keys, cl.Args...)
		}
	}
}

// nodeKey names the node that serves key on Cluster, "" elsewhere.
func (r *Runner) nodeKey(ctx context.Context, key string) string {
	cc := r.cluster
	if cc == nil {
		return ""
	}
	node, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return key
	}
	return node.Options().Addr
}

// MayHaveRun reports whether a call that failed with err may have run on
// the server all the same: every failure but an error reply from Redis (a
// lost reply, a timeout, a cancelled context, a dropped connection) leaves
// that open, and go-redis may still resend it; a call never sent
// (NotSentError) has not run.
func MayHaveRun(err error) bool {
	var reply redis.Error
	var notSent NotSentError
	return err != nil && !errors.As(err, &reply) && !errors.As(err, &notSent)
}
