package tracking

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// round is one set of tracking connections, one per tracked node, that
// live and die together: values are stored only while every one of them
// is established, and the first to fail ends the others.
type round struct {
	c *Cache
	n int // connections that must be established for values to be stored

	mu   sync.Mutex
	pss  []*redis.PubSub
	up   int
	over bool
}

// add registers a connection's PubSub, for end to close; false once the
// round is over (ps is closed then).
func (r *round) add(ps *redis.PubSub) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		_ = ps.Close()
		return false
	}
	r.pss = append(r.pss, ps)
	return true
}

// established counts a connection up, and makes the cache live when it is
// the last one the round waited for.
func (r *round) established() {
	r.c.connected.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.up++
	if r.up == r.n && !r.over {
		r.c.setLive(true)
	}
}

// end ends the round: no value is stored from now on, every value is
// dropped, and every connection is closed. It is safe to call more than
// once.
func (r *round) end() {
	r.mu.Lock()
	if r.over {
		r.mu.Unlock()
		return
	}
	r.over = true
	pss := r.pss
	r.mu.Unlock()
	r.c.setLive(false)
	for _, ps := range pss {
		_ = ps.Close()
	}
}

// run keeps a round of tracking connections established until Close, with
// a backoff between failed attempts.
func (c *Cache) run() {
	defer close(c.done)
	backoff := 10 * time.Millisecond
	reported := false // the failures since the last established round were reported
	for c.ctx.Err() == nil {
		established, err := c.round()
		c.setLive(false)
		if c.ctx.Err() != nil {
			return
		}
		if established {
			backoff, reported = 10*time.Millisecond, false
		}
		if c.cfg.Event != nil && !reported {
			c.cfg.Event("tracking connection lost", err) // once per outage, not per retry
			reported = true
		}
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

var (
	errMoved    = errors.New("tracking: the tracking connection is not on the master")
	errTopology = errors.New("tracking: the masters changed")
	errNoNodes  = errors.New("tracking: no master to track")
)

// round dials one tracking connection per node (one: Server's, without
// Nodes) and serves them until one fails or the masters change;
// established reports whether all of them went live.
func (c *Cache) round() (established bool, err error) {
	addrs := []string{""}
	if c.cfg.Nodes != nil {
		if addrs, err = c.nodes(); err != nil {
			return false, err
		}
	}
	r := &round{c: c, n: len(addrs)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false, nil
	}
	c.cur = r
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cur = nil
		c.mu.Unlock()
	}()
	errs := make(chan error, len(addrs))
	var up atomic.Int32
	for _, a := range addrs {
		go func() { errs <- c.session(r, a, &up) }()
	}
	var tick <-chan time.Time
	if c.cfg.Nodes != nil {
		t := time.NewTicker(c.cfg.HealthCheck)
		defer t.Stop()
		tick = t.C
	}
	pending := len(addrs)
	for err == nil {
		select {
		case e := <-errs:
			pending--
			err = cmpOr(e, errors.New("tracking: connection ended"))
		case <-tick:
			now, nerr := c.nodes()
			if nerr == nil && !slices.Equal(now, addrs) {
				err = errTopology // an error asking is not a change: a lost node fails its connection
			}
		}
	}
	established = int(up.Load()) == len(addrs)
	r.end()
	for ; pending > 0; pending-- {
		<-errs
	}
	return established, err
}

// nodes returns the masters to track, sorted.
func (c *Cache) nodes() ([]string, error) {
	ctx, cancel := context.WithTimeout(c.ctx, max(c.cfg.HealthCheck, time.Second))
	defer cancel()
	addrs, err := c.cfg.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errNoNodes
	}
	addrs = slices.Clone(addrs)
	slices.Sort(addrs)
	return slices.Compact(addrs), nil
}

// session dials one tracking connection to addr ("": Server's) and serves
// its invalidations until it fails or r ends; it counts itself in up once
// established.
func (c *Cache) session(r *round, addr string, up *atomic.Int32) error {
	name := "redisson-tracking-" + uuid.NewString()[:8]
	var id atomic.Int64
	opt := *c.cfg.Server
	if addr != "" {
		opt.Addr = addr
	}
	opt.Protocol = 2
	opt.ClientName = name
	opt.PoolSize = 1
	opt.MaxRetries = -1
	opt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		if id.Load() != 0 {
			return errors.New("tracking: reconnection refused") // a new connection is a new session
		}
		n, err := cn.ClientID(ctx).Result()
		if err != nil {
			return err
		}
		args := []any{"client", "tracking", "on", "redirect", n, "bcast"}
		for _, p := range c.cfg.Prefixes {
			args = append(args, "prefix", p)
		}
		if err := cn.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("tracking: CLIENT TRACKING: %w", err)
		}
		id.Store(n)
		return nil
	}
	rdb := redis.NewClient(&opt)
	defer rdb.Close()
	ps := rdb.Subscribe(c.ctx, InvalidateChannel)
	if !r.add(ps) {
		return errors.New("tracking: round over")
	}
	defer r.end() // the first connection to fail ends the others

	hc := c.cfg.HealthCheck
	pinged, established := false, false
	lastCheck := time.Now()
	for {
		msg, err := ps.ReceiveTimeout(c.ctx, hc)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || pinged || !established {
				return err
			}
			if err := ps.Ping(c.ctx); err != nil {
				return err
			}
			pinged = true
			continue
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" && m.Channel == InvalidateChannel && !established {
				established = true
				up.Add(1)
				r.established()
			}
		case *redis.Message:
			if m.Channel != InvalidateChannel {
				continue
			}
			if len(m.PayloadSlice) == 0 {
				c.flush() // FLUSHALL / FLUSHDB reach tracking as one null message
				continue
			}
			for _, k := range m.PayloadSlice {
				c.invalidate(k)
			}
		}
		if established && c.cfg.Nodes == nil && time.Since(lastCheck) >= hc {
			lastCheck = time.Now()
			if err := c.onMaster(id.Load(), name); err != nil {
				return err
			}
		}
	}
}

// onMaster checks, through the client the reads go through, that the
// tracking connection is a client of the same server. An error of the
// check itself is not a loss: the tracking connection fails by itself if
// the server is gone.
func (c *Cache) onMaster(id int64, name string) error {
	if c.cfg.Master == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.HealthCheck)
	defer cancel()
	line, err := c.cfg.Master.Do(ctx, "client", "list", "id", id).Text()
	if err != nil {
		return nil
	}
	if !strings.Contains(line, " name="+name+" ") {
		return errMoved
	}
	return nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
