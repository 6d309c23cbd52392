package scripting

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// nodePipes is the auto-pipeline on a Cluster: one autoPipe per master,
// each with its own lanes and queue, so that calls queue up only behind
// calls to the same master and a slow or failing master holds up no call
// to another. A keyed call goes to the pipe of the master go-redis's slot
// map gives for its first key (MasterForKey: a lookup in the client's
// cached map, no I/O); a call without keys, or whose master the map cannot
// give, is sent through the Cluster client on its own as before.
//
// A call sent alone (on a free lane, or the only one of a batch) goes
// through the Cluster client, as without the auto-pipeline. A pipeline goes
// through its master's own client (the Cluster client's node client), not
// through a Cluster pipeline: go-redis re-sends every command
// of a node's batch when the first reply is a retryable refusal (TRYAGAIN
// during a slot migration), including those already answered and those it
// already queued elsewhere after MOVED or ASK, so that one command can be
// sent twice at once. Here a node's batch is that node's pipeline, re-sent
// whole only after a network error, as on a single node (each script
// recognises its own resend). A call the node refused before running it
// because its slot is elsewhere (MOVED, ASK) or whose node client was
// closed (the node left the cluster) is sent again on its own through the
// Cluster client, which follows the redirection and refreshes its slot map;
// a TRYAGAIN goes back to the Runner, which retries it.
//
// Hooks: a call sent alone is seen by the Cluster client's hooks and its
// node client's, as without the auto-pipeline; a pipeline only by the node
// client's (those ClusterClient.OnNewNode adds, as OpenTelemetry's redisotel
// does), then each call sent again after a redirection by both.
type nodePipes struct {
	cluster *redis.ClusterClient
	lanes   int
	pipes   sync.Map // *redis.Client of a master -> *autoPipe
}

func newNodePipes(cluster *redis.ClusterClient, lanes int) *nodePipes {
	return &nodePipes{cluster: cluster, lanes: lanes}
}

// process runs cmd as autoPipe.process does, in the pipe of its master.
func (n *nodePipes) process(ctx context.Context, cmd *redis.Cmd, keyed bool) {
	p := n.pipeFor(ctx, cmd, keyed)
	if p == nil {
		_ = n.cluster.Process(ctx, cmd)
		return
	}
	p.process(ctx, cmd, keyed)
	if err := cmd.Err(); err != nil && (isRedirect(err) || errors.Is(err, redis.ErrClosed)) && ctx.Err() == nil {
		cmd.SetErr(nil)
		_ = n.cluster.Process(ctx, cmd)
	}
}

// isRedirect reports a refusal of a command that did not run because its
// slot is served elsewhere.
func isRedirect(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK ")
}

// pipeFor returns the pipe of cmd's master, or nil to send cmd on its own.
func (n *nodePipes) pipeFor(ctx context.Context, cmd *redis.Cmd, keyed bool) *autoPipe {
	if !keyed {
		return nil
	}
	key, ok := cmd.Args()[3].(string)
	if !ok {
		return nil
	}
	node, err := n.cluster.MasterForKey(ctx, key)
	if err != nil {
		return nil
	}
	if p, ok := n.pipes.Load(node); ok {
		return p.(*autoPipe)
	}
	p, _ := n.pipes.LoadOrStore(node, &autoPipe{rdb: node, one: n.cluster, lanes: n.lanes})
	return p.(*autoPipe)
}
