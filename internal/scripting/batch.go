package scripting

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"
)

// RunBatch sends calls, script calls and plain commands mixed, as one
// batch: one round trip per node (on Cluster one pipeline per master,
// through nodeRouter), unless a script must be loaded first.
//
// Not atomic, the calls go out as one pipeline of EVALSHAs and plain
// commands. The scripts among them that this Runner has not seen yet are
// loaded first (Preload: one more round trip per node, once per script),
// so that the calls run in their order; a script flushed since it was seen
// (SCRIPT FLUSH, a restart, a failover) answers NOSCRIPT and its calls are
// sent again once it is loaded, after the others (see RunPipelined).
//
// Atomic, the calls go out as one MULTI/EXEC (on Cluster, one per slot:
// the caller keeps them in one). Scripts are sent with EVAL, their body
// inside the transaction, so that a script missing on the server cannot
// split it: inside EXEC a NOSCRIPT would fail that call alone after the
// others had run.
//
// A batch whose context has already ended is not sent: RunBatch returns
// NotSentError and leaves every Cmd nil. Otherwise each call's result is
// in its Cmd and the error returned is the first transport error, if any.
func (r *Runner) RunBatch(ctx context.Context, calls []Call, atomic bool) error {
	if err := ctx.Err(); err != nil {
		return NotSentError{err}
	}
	if atomic {
		return r.runTx(ctx, calls)
	}
	var unseen []*Script
	for i := range calls {
		s := calls[i].Script
		if s != nil && !r.wasSeen(s) && !slices.Contains(unseen, s) {
			unseen = append(unseen, s)
		}
	}
	if len(unseen) > 0 {
		if err := r.Preload(ctx, unseen); err != nil {
			return err
		}
	}
	return r.RunPipelined(ctx, calls)
}

// runTx sends calls as one MULTI/EXEC, scripts with EVAL.
func (r *Runner) runTx(ctx context.Context, calls []Call) error {
	return r.send(ctx, r.rdb.TxPipeline(), calls, true)
}

// plainCmd is the command line args, routed on Cluster by its second word,
// the key of every plain command a batch sends.
func plainCmd(ctx context.Context, args []any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	cmd.SetFirstKeyPos(1)
	return cmd
}
