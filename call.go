package redisson

import (
	"context"

	"github.com/goredisson/redisson/internal/scripting"
	"github.com/redis/go-redis/v9"
)

// call is one script invocation inside a pipeline, or, with s nil (in a
// Batch only), the plain command line args.
type call struct {
	s    *script
	keys []string
	args []any
	cmd  *redis.Cmd
}

// runPipelined sends all calls in one pipeline (on Cluster one per master,
// through the master's own client). Calls that failed with NOSCRIPT have their script loaded on the
// node that answered and are sent once more, again pipelined. Each call's
// result is left in its cmd field; the error returned is the first transport
// error, if any. See scripting.Runner.RunPipelined.
func (c *scripts) runPipelined(ctx context.Context, calls []*call) error {
	batch := make([]scripting.Call, len(calls))
	for i, cl := range calls {
		batch[i] = scripting.Call{Script: cl.s, Keys: cl.keys, Args: cl.args}
	}
	err := c.r.RunPipelined(ctx, batch)
	for i, cl := range calls {
		cl.cmd = batch[i].Cmd
	}
	return err
}

// runBatch sends a Batch's calls, scripts and plain commands mixed, in one
// pipeline, or with atomic in one MULTI/EXEC (scripts then with EVAL); a
// batch whose context has already ended is not sent
// (scripting.NotSentError, every cmd left nil). See
// scripting.Runner.RunBatch.
func (c *scripts) runBatch(ctx context.Context, calls []call, atomic bool) error {
	batch := make([]scripting.Call, len(calls))
	for i, cl := range calls {
		batch[i] = scripting.Call{Script: cl.s, Keys: cl.keys, Args: cl.args}
	}
	err := c.r.RunBatch(ctx, batch, atomic)
	for i := range calls {
		calls[i].cmd = batch[i].Cmd
	}
	return err
}
