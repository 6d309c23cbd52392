package redisson

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Capabilities is what the Redis server behind a Client supports of the
// commands this package may use, as Client.Capabilities detected it (from
// INFO server and COMMAND INFO). On Cluster it holds for every master:
// a command counts as present only if every master has it, and Version is
// the lowest master's. A command renamed away (rename-command) counts as
// missing.
type Capabilities struct {
	// Server is the server's name, "redis" or "valkey".
	Server string
	// Version is the server's version, "7.2.4" (for Valkey, Valkey's own).
	Version string
	// ShardedPubSub reports SSUBSCRIBE and SPUBLISH (Redis 7+), which
	// GetShardedTopic and PubSubSharded need.
	ShardedPubSub bool
	// BLMove reports BLMOVE (Redis 6.2+), with which the blocking queues'
	// takes wait for an element.
	BLMove bool
	// HashFieldTTL reports HEXPIRE (Redis 7.4+, Valkey 9+), per-field
	// expiry in a hash. No call of this package needs it yet.
	HashFieldTTL bool
	// ClientNoEvict reports CLIENT NO-EVICT (Redis 7+), with which the
	// pub/sub connections are kept from client eviction
	// (maxmemory-clients).
	ClientNoEvict bool
	// Missing lists, in upper case, the commands this package may use
	// that the server lacks ("BLMOVE", "CLIENT|NO-EVICT"), in the order of
	// capCommands; empty when it has them all.
	Missing []string
}

// capCommands are the commands whose presence Capabilities reports: those
// every call needs (EVALSHA, SCRIPT), and those of features a server may
// lack. COMMAND INFO names a subcommand as "container|sub".
var capCommands = []string{"evalsha", "script", "publish", "subscribe", "blmove", "ssubscribe", "spublish", "hexpire", "client|no-evict"}

// Has reports whether the server has cmd, one of the commands Missing may
// list (case does not matter).
func (c Capabilities) Has(cmd string) bool {
	cmd = strings.ToUpper(cmd)
	for _, m := range c.Missing {
		if m == cmd {
			return false
		}
	}
	return true
}

// Capabilities returns what the server supports. It is detected once per
// Client, with INFO server and COMMAND INFO (on Cluster, on every master),
// and kept after the first success; concurrent callers share one
// detection, and a failed one is tried again by the next call. Ping fills
// it. It returns ErrClientClosed after Close, ErrAuth, ErrUnreachable or
// another Redis error when the detection fails, and ctx's error when ctx
// ends first.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	if c.closed.Load() {
		return Capabilities{}, ErrClientClosed
	}
	return c.caps.get(ctx)
}

// capsProbe detects a client's Capabilities once. It is safe for
// concurrent use: the first caller detects with its context, the others
// wait for it (or their own context's end), and try again themselves when
// it failed for its caller's context while theirs is alive.
type capsProbe struct {
	rdb     redis.UniversalClient
	cluster *redis.ClusterClient

	mu     sync.Mutex
	known  *Capabilities // set by the first success
	flight *capsFlight   // the detection in progress, nil when none
}

// capsFlight is one detection: done is closed once caps and err are set.
type capsFlight struct {
	done chan struct{}
	caps Capabilities
	err  error
}

func newCapsProbe(rdb redis.UniversalClient, topo topology) *capsProbe {
	return &capsProbe{rdb: rdb, cluster: topo.cluster}
}

// cached returns the capabilities once known, without I/O.
func (p *capsProbe) cached() (Capabilities, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known == nil {
		return Capabilities{}, false
	}
	return *p.known, true
}

func (p *capsProbe) get(ctx context.Context) (Capabilities, error) {
	for {
		p.mu.Lock()
		if p.known != nil {
			caps := *p.known
			p.mu.Unlock()
			return caps, nil
		}
		f := p.flight
		if f == nil {
			f = &capsFlight{done: make(chan struct{})}
			p.flight = f
			p.mu.Unlock()
			f.caps, f.err = p.detect(ctx)
			p.mu.Lock()
			if f.err == nil {
				p.known = &f.caps
			}
			p.flight = nil
			close(f.done)
			p.mu.Unlock()
			return f.caps, f.err
		}
		p.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return Capabilities{}, ctx.Err()
		}
		if f.err == nil || ctx.Err() != nil || !isCtxErr(f.err) {
			return f.caps, f.err
		}
	}
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// detect asks the server (on Cluster, every master) and combines the
// answers: a command is present only if every master has it.
func (p *capsProbe) detect(ctx context.Context) (Capabilities, error) {
	if p.cluster == nil {
		return detectOn(ctx, p.rdb)
	}
	var mu sync.Mutex
	var all []Capabilities
	err := p.cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		caps, err := detectOn(ctx, node)
		if err != nil {
			return err
		}
		mu.Lock()
		all = append(all, caps)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return Capabilities{}, classify(err)
	}
	return combineCaps(all), nil
}

// detectOn asks one node with INFO server and COMMAND INFO, in one
// pipeline.
func detectOn(ctx context.Context, node redis.Cmdable) (Capabilities, error) {
	args := []any{"command", "info"}
	for _, c := range capCommands {
		args = append(args, c)
	}
	var info *redis.StringCmd
	var cmds *redis.Cmd
	_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
		info = p.Info(ctx, "server")
		cmds = p.Do(ctx, args...)
		return nil
	})
	if err != nil {
		return Capabilities{}, classify(err)
	}
	caps := parseServerInfo(info.Val())
	found, _ := cmds.Slice()
	for i, c := range capCommands {
		if i >= len(found) || found[i] == nil {
			caps.Missing = append(caps.Missing, strings.ToUpper(c))
		}
	}
	return caps.withFlags(), nil
}

// withFlags sets the feature fields from Missing.
func (c Capabilities) withFlags() Capabilities {
	c.ShardedPubSub = c.Has("ssubscribe") && c.Has("spublish")
	c.BLMove = c.Has("blmove")
	c.HashFieldTTL = c.Has("hexpire")
	c.ClientNoEvict = c.Has("client|no-evict")
	return c
}

// parseServerInfo reads the server's name and version from INFO server.
func parseServerInfo(info string) Capabilities {
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	caps := Capabilities{Server: "redis", Version: fields["redis_version"]}
	if name := fields["server_name"]; name != "" {
		caps.Server = name
	}
	if v := fields[caps.Server+"_version"]; v != "" {
		caps.Version = v
	}
	return caps
}

// combineCaps is the capabilities every master has: the lowest version,
// every command missing on any master.
func combineCaps(all []Capabilities) Capabilities {
	if len(all) == 0 {
		return Capabilities{}
	}
	out := Capabilities{Server: all[0].Server, Version: all[0].Version}
	for _, c := range all[1:] {
		if versionLess(c.Version, out.Version) {
			out.Server, out.Version = c.Server, c.Version
		}
	}
	for _, cmd := range capCommands {
		for _, c := range all {
			if !c.Has(cmd) {
				out.Missing = append(out.Missing, strings.ToUpper(cmd))
				break
			}
		}
	}
	return out.withFlags()
}

// versionLess compares dotted versions numerically ("6.2.14" < "7.0.0").
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}
