package scripting

import (
	"context"
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
// through its master's own client, and a call its master refused before
// running it, or whose node client was closed, is sent again on its own
// through the Cluster client: the rules of nodeRouter, which routes the
// calls and sends them again. A TRYAGAIN the Cluster client still meets
// goes back to the Runner, which retries it.
type nodePipes struct {
	route *nodeRouter
	lanes int
	pipes sync.Map // *redis.Client of a master -> *autoPipe
}

func newNodePipes(route *nodeRouter, lanes int) *nodePipes {
	return &nodePipes{route: route, lanes: lanes}
}

// process runs cmd as autoPipe.process does, in the pipe of its master.
func (n *nodePipes) process(ctx context.Context, cmd *redis.Cmd, keyed bool) {
	p := n.pipeFor(ctx, cmd, keyed)
	if p == nil {
		_ = n.route.cluster.Process(ctx, cmd)
		return
	}
	p.process(ctx, cmd, keyed)
	n.route.resend(ctx, cmd)
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
	node := n.route.master(ctx, key)
	if node == nil {
		return nil
	}
	if p, ok := n.pipes.Load(node); ok {
		return p.(*autoPipe)
	}
	p, _ := n.pipes.LoadOrStore(node, &autoPipe{rdb: node, one: n.route.cluster, lanes: n.lanes})
	return p.(*autoPipe)
}
