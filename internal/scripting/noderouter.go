package scripting

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// nodeRouter sends commands on a Cluster through the clients of the
// masters that serve their keys (the Cluster client's own node clients),
// never through a go-redis Cluster pipeline. It is the one engine behind
// every pipeline the Runner sends on a Cluster: the auto-pipeline's, one
// per master (nodepipes.go), and RunPipelined's and RunBatch's, split per
// master (pipeline).
//
// go-redis's Cluster pipeline re-sends every command of a node's batch when
// the node's first reply is a retryable refusal (TRYAGAIN during a slot
// migration), including the commands already answered and those it had
// already queued for another node after MOVED or ASK: one command can then
// run twice, an RPUSH add its value twice. Here a master's batch is that
// master's own pipeline, re-sent whole only after a network error, as on a
// single node. A command the master refused before running it (MOVED or ASK:
// its slot is served elsewhere; TRYAGAIN: its keys are split by a
// migration), or whose node client was closed (the node left the cluster),
// is sent again on its own through the Cluster client, which follows the
// redirection, refreshes its slot map and retries TRYAGAIN; a master's
// commands sent again go one at a time in their order, after its pipeline.
//
// Routing is by go-redis's slot map (MasterForKey: a lookup in the Cluster
// client's cached map, no I/O). A command without a key, or whose master the
// map cannot give, goes through the Cluster client on its own.
//
// Hooks: a command sent alone is seen by the Cluster client's hooks and its
// node client's; a pipeline only by the node client's (those
// ClusterClient.OnNewNode adds, as OpenTelemetry's redisotel does), then
// each command sent again by both.
type nodeRouter struct {
	cluster *redis.ClusterClient
}

// master returns the client of the master serving key, nil when the slot
// map cannot tell.
func (n *nodeRouter) master(ctx context.Context, key string) *redis.Client {
	node, err := n.cluster.MasterForKey(ctx, key)
	if err != nil {
		return nil
	}
	return node
}

// resend sends cmd again on its own through the Cluster client when a
// master refused it before running it or its node client was closed (see
// nodeRouter), unless ctx has ended.
func (n *nodeRouter) resend(ctx context.Context, cmd redis.Cmder) {
	err := cmd.Err()
	if err == nil || ctx.Err() != nil || !(isRefusedBeforeRun(err) || errors.Is(err, redis.ErrClosed)) {
		return
	}
	cmd.SetErr(nil)
	_ = n.cluster.Process(ctx, cmd)
}

// isRefusedBeforeRun reports a refusal of a command that did not run
// because its slot is served elsewhere (MOVED, ASK) or its keys are split
// by a migration (TRYAGAIN).
func isRefusedBeforeRun(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK ") || strings.HasPrefix(msg, "TRYAGAIN")
}

// pipeline sends cmds, keys[i] being the key that routes cmds[i] ("" for
// none), as one pipeline per master, the masters' at once, and returns when
// every command has its reply or error. Each master's commands go in their
// order; a master given one command gets it on its own, through the Cluster
// client. A panic in a go-redis hook is recovered, as errAutoPipePanic for
// the commands of its send: they may have run.
func (n *nodeRouter) pipeline(ctx context.Context, cmds []redis.Cmder, keys []string) {
	var (
		nodes  []*redis.Client // nil: no master known, each sent alone
		groups [][]redis.Cmder // groups[i] goes to nodes[i]
		at     = make(map[*redis.Client]int, 4)
		alone  = -1
	)
	for i, cmd := range cmds {
		var node *redis.Client
		if keys[i] != "" {
			node = n.master(ctx, keys[i])
		}
		g, ok := alone, alone >= 0
		if node != nil {
			g, ok = at[node]
		}
		if !ok {
			g = len(nodes)
			nodes, groups = append(nodes, node), append(groups, nil)
			if node == nil {
				alone = g
			} else {
				at[node] = g
			}
		}
		groups[g] = append(groups[g], cmd)
	}
	var wg sync.WaitGroup
	for g := 1; g < len(groups); g++ {
		wg.Go(func() { n.sendTo(ctx, nodes[g], groups[g]) })
	}
	if len(groups) > 0 {
		n.sendTo(ctx, nodes[0], groups[0])
	}
	wg.Wait()
}

// sendTo sends cmds to node's master as one pipeline, then each it refused
// again on its own (see nodeRouter); with node nil, or one command, each
// goes on its own through the Cluster client.
func (n *nodeRouter) sendTo(ctx context.Context, node *redis.Client, cmds []redis.Cmder) {
	defer func() {
		if r := recover(); r != nil {
			for _, c := range cmds {
				c.SetErr(fmt.Errorf("%w: %v", errAutoPipePanic, r))
			}
		}
	}()
	if node == nil || len(cmds) == 1 {
		for _, c := range cmds {
			_ = n.cluster.Process(ctx, c)
		}
		return
	}
	pipe := node.Pipeline()
	_ = pipe.BatchProcess(ctx, cmds...)
	_, _ = pipe.Exec(ctx) // each command has its own reply or error
	for _, c := range cmds {
		n.resend(ctx, c)
	}
}
