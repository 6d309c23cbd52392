package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

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
