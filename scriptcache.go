package redisson

import (
	"context"
	"time"

	"github.com/goredisson/redisson/internal/scripting"
	"github.com/redis/go-redis/v9"
)

// scripts is the Client's script runner: the objects' and services' one
// way to run a script. The engine is internal/scripting's Runner (EVALSHA
// only, NOSCRIPT load and one retry, migration retries, WAIT, the
// auto-pipeline); scripts wires it to the Client's topology, options and
// emitter, and keeps the methods the rest of the package calls. It is safe
// for concurrent use.
type scripts struct {
	r *scripting.Runner
	// emit reports the client's background events (the delayed-queue
	// mover's too).
	emit *emitter
}

// autoPipeLanes is the default number of sends in flight before calls
// queue. Chosen by measurement on 2 cores: with 2, four goroutines' calls
// batched and ran 0.65x as fast as alone; with 4 nothing batches up to four
// goroutines, and 8 and 32 gain as much as with 2 (docs/performance.md).
const autoPipeLanes = 4

// clusterPipeLanes is the number of sends in flight to one master of a
// Cluster before its calls queue. Chosen by measurement on 2 cores and 3
// masters (go test -run '^$' -bench ClusterLockUncontended): with 32
// goroutines 1.16 round trips per lock+unlock at 4 lanes, 0.70 at 2 and
// 0.42 at 1, at the same or better throughput; with 4 goroutines nothing
// batches and 1 lane was no slower than none.
const clusterPipeLanes = 1

// newScripts returns the script runner of a client on rdb, whose options
// are o (defaults filled in).
func newScripts(rdb redis.UniversalClient, topo topology, em *emitter, o Options) *scripts {
	return &scripts{r: scripting.NewRunner(runnerConfig(rdb, topo, em, o)), emit: em}
}

// runnerConfig is the engine's configuration for a client on rdb: the
// auto-pipeline unless Options.DisableAutoPipeline (on Cluster one per
// master, so that a failing master holds up only its own calls); round
// trips counted into the operation record when an Observer is set; each
// SCRIPT LOAD after NOSCRIPT of a script the client had loaded or run
// before reported as EventScriptReloaded (a first load is not a reload).
func runnerConfig(rdb redis.UniversalClient, topo topology, em *emitter, o Options) scripting.Config {
	cfg := scripting.Config{
		Redis:    rdb,
		Cluster:  topo.cluster,
		Reloaded: func(name string) { em.emit(Event{Type: EventScriptReloaded, Name: name}) },
	}
	if !o.DisableAutoPipeline {
		cfg.Lanes = autoPipeLanes
		if topo.isCluster() {
			cfg.Lanes = clusterPipeLanes
		}
	}
	if o.Observer != nil {
		cfg.CountTrips = countTrips
	}
	return cfg
}

// run calls s with EVALSHA and, on NOSCRIPT, loads it and calls again (up to three loads);
// a call refused during a slot migration is retried for up to 3 s; a call
// whose context has already ended is not sent (scripting.NotSentError). See
// scripting.Runner.Run.
func (c *scripts) run(ctx context.Context, s *script, keys []string, args ...any) *redis.Cmd {
	return c.r.RunArgv(ctx, s, keys, nil, args)
}

// runArgv is run for argv, a command line of s from s.Argv whose KEYS are
// keys; with argv nil, the line is built from keys and args as go-redis
// builds it.
func (c *scripts) runArgv(ctx context.Context, s *script, keys []string, argv, args []any) *redis.Cmd {
	return c.r.RunArgv(ctx, s, keys, argv, args)
}

// runWait calls s like run, followed in the same pipeline by WAIT replicas
// timeout (ReplicaAck), and returns the script's result and how many
// replicas acknowledged (0 when the WAIT did not run). See
// scripting.Runner.RunWait.
func (c *scripts) runWait(ctx context.Context, s *script, keys []string, replicas int, timeout time.Duration, args ...any) (*redis.Cmd, int64) {
	return c.r.RunWait(ctx, s, keys, replicas, timeout, args...)
}

// isNoScript reports whether err is Redis saying the script is not loaded
// on the node that answered.
func isNoScript(err error) bool { return scripting.IsNoScript(err) }
