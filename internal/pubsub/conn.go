package pubsub

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// connKey names a pub/sub connection: the plain one, or the sharded one of
// a cluster node (addr; empty outside Cluster).
type connKey struct {
	sharded bool
	addr    string
}

// psConn is one go-redis PubSub and its receive loop.
//
// Sharded connections are not left to go-redis's reconnect, which
// re-subscribes all channels in one SSUBSCRIBE (refused across slots) and
// stays on the node it first chose: any error on a sharded connection
// retires it, and its channels are subscribed again, one SSUBSCRIBE each, on
// the connection of the node that now serves their slot (replace, reroute).
// A channel whose slot migrated away is unsubscribed by the server (an
// unasked "sunsubscribe"), and subscribed again on its new node the same way.
type psConn struct {
	key     connKey
	ps      *redis.PubSub
	started bool // its receive loop runs; guarded by Service.mu
	// writes waiting to be sent, in the order decided, and whether a
	// goroutine is sending them; guarded by Service.mu. See
	// queueLocked.
	queue   []func()
	writing bool
	retired bool // replaced: its loop returns at its next read; guarded by Service.mu

	// The presence channel (single node or Sentinel only), guarded by
	// Service.mu: whether its SUBSCRIBE was sent, and when Redis last
	// confirmed it.
	presence   bool
	presenceAt time.Time
}

func (c *psConn) subscribe(channels ...string) {
	if c.key.sharded {
		_ = c.ps.SSubscribe(context.Background(), channels...)
	} else {
		_ = c.ps.Subscribe(context.Background(), channels...)
	}
}

func (c *psConn) unsubscribe(channel string) {
	if c.key.sharded {
		_ = c.ps.SUnsubscribe(context.Background(), channel)
	} else {
		_ = c.ps.Unsubscribe(context.Background(), channel)
	}
}

// nodeOf returns the address of the master serving channel's slot, for a
// sharded subscription on Cluster; "" otherwise.
func (p *Service) nodeOf(ctx context.Context, key Key) (string, error) {
	if !key.Sharded || p.cluster == nil {
		return "", nil
	}
	node, err := p.cluster.MasterForKey(ctx, key.Name)
	if err != nil {
		return "", err
	}
	return node.Options().Addr, nil
}

// connLocked returns the connection for key, creating it if needed. Caller
// holds p.mu.
func (p *Service) connLocked(key connKey) *psConn {
	if c := p.conns[key]; c != nil {
		return c
	}
	// Subscribe with no channel creates the PubSub without connecting; the
	// first (S)SUBSCRIBE connects, on Cluster to the node of its channel.
	c := &psConn{key: key, ps: p.rdb.Subscribe(context.Background())}
	p.conns[key] = c
	return c
}

// effects are the writes a locked section decided on, for its caller to
// carry out once it has released p.mu: the connections whose queued writes
// it must send (see queueLocked). The zero value has none.
type effects struct {
	drain []*psConn
}

// queueLocked queues write on connection c. Writes on one connection are
// sent in the order in which the decisions to write were taken under p.mu,
// by one goroutine at a time: if none is sending c's writes, the caller
// becomes it, and fx names c for its flush. Caller holds p.mu.
func (p *Service) queueLocked(fx *effects, c *psConn, write func()) {
	c.queue = append(c.queue, write)
	if !c.writing {
		c.writing = true
		fx.drain = append(fx.drain, c)
	}
}

// flush carries out fx. Caller does not hold p.mu.
func (p *Service) flush(fx effects) {
	for _, c := range fx.drain {
		p.drain(c)
	}
}

// drain sends the writes queued on c until none is left, as the one
// goroutine that set c.writing, and starts c's receive loop after the first
// of them: a read before would connect to a random node. p.mu is released
// while a write runs, so a write that hangs (dialing an unreachable node)
// delays only the later writes of its own connection. Writes queued after
// the service closed are not sent. Caller does not hold p.mu.
func (p *Service) drain(c *psConn) {
	p.mu.Lock()
	for len(c.queue) > 0 && !p.closed {
		w := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		p.mu.Unlock()
		w()
		p.mu.Lock()
		if !p.closed && !c.started && !c.retired {
			c.started = true
			p.loops.Add(1)
			go p.receive(c)
		}
	}
	c.queue = nil
	c.writing = false
	p.mu.Unlock()
}

// receive is the single reader of connection c. It returns when the
// service closes or c is retired.
func (p *Service) receive(c *psConn) {
	defer p.loops.Done()
	ctx := context.Background()
	p.mu.Lock()
	backoff := p.backoffs[c.key] // a replaced connection's, so that failing replacements back off too
	p.mu.Unlock()
	var pinged time.Time // when an unanswered ping was sent
	lastCheck := time.Now()
	for {
		msg, err := c.ps.ReceiveTimeout(ctx, p.health)
		select {
		case <-p.closing:
			return
		default:
		}
		p.mu.Lock()
		retired := c.retired
		p.mu.Unlock()
		if retired {
			return
		}
		if time.Since(lastCheck) >= p.health {
			lastCheck = time.Now()
			p.resubscribeUnconfirmed(c)
			if p.presenceLost(c) {
				p.lost(c, errPresenceLost)
				p.replace(c)
				return
			}
		}
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				p.mu.Lock()
				p.lostLocked(c)
				p.mu.Unlock()
				if backoff == 0 {
					p.lost(c, err) // once per outage, not per failed re-dial
				}
				// go-redis re-dials on the next read; do not spin meanwhile.
				backoff = min(max(2*backoff, 20*time.Millisecond), time.Second)
				select {
				case <-p.closing:
					return
				case <-time.After(backoff):
				}
				if c.key.sharded {
					// See psConn: sharded connections are replaced,
					// their channels re-routed to the nodes serving them now.
					p.mu.Lock()
					p.backoffs[c.key] = backoff
					p.mu.Unlock()
					p.replace(c)
					return
				}
				continue
			}
			// Idle. A connection that does not even answer a ping is dead
			// without knowing it (no reset arrived): replace it.
			if !pinged.IsZero() && time.Since(pinged) >= p.health {
				p.lost(c, errNoPong)
				p.replace(c)
				return
			}
			if pinged.IsZero() {
				pinged = time.Now()
				_ = c.ps.Ping(ctx)
			}
			continue
		}
		if backoff != 0 {
			// go-redis dialled again and subscribed the channels anew.
			p.mu.Lock()
			delete(p.backoffs, c.key)
			p.redialed++
			n := p.channelsOnLocked(c)
			p.mu.Unlock()
			p.tell(Report{Kind: Replaced, Node: c.key.addr, Channels: n})
		}
		backoff, pinged = 0, time.Time{}
		p.dispatch(c, msg)
	}
}

// replace retires connection c and subscribes its channels again: on a new
// plain connection, or, for sharded ones, each on the connection of the node
// now serving its slot. Confirmed channels then wake all their waiters (see
// dispatch), since messages may have been lost.
func (p *Service) replace(c *psConn) {
	if c.key.sharded && p.cluster != nil {
		// Have go-redis refresh its view of the slots, so that a failover
		// or migration is seen by the next lookups.
		p.cluster.ReloadState(context.Background())
	}
	p.mu.Lock()
	if p.closed || c.retired {
		p.mu.Unlock()
		return
	}
	c.retired = true
	p.replaced++
	p.lostLocked(c)
	delete(p.conns, c.key)
	var moved []*channelEntry
	for _, e := range p.entries {
		if e.conn == c {
			moved = append(moved, e)
		}
	}
	p.mu.Unlock()
	_ = c.ps.Close()
	to, n := p.rerouteAll(moved)
	p.tell(Report{Kind: Replaced, Node: c.key.addr, Channels: len(moved)})
	p.reportRerouted(to, n)
}

// Why a connection that reported no error was found lost.
var (
	errPresenceLost = errors.New("the master has nobody on this client's presence channel")
	errNoPong       = errors.New("no answer to a ping")
)

// lost reports that connection c failed with err.
func (p *Service) lost(c *psConn, err error) {
	p.mu.Lock()
	n := p.channelsOnLocked(c)
	p.mu.Unlock()
	p.tell(Report{Kind: Lost, Node: c.key.addr, Channels: n, Err: err})
}

// presenceLocked returns the presence channel if c must still subscribe it
// (the plain connection of a single-node or Sentinel client), marking it
// sent. Caller holds p.mu.
//
// A Sentinel failover client does not move a pub/sub connection when the
// master changes: it stays on the old master, which hears none of the new
// master's messages until it rejoins as a replica (about 10s). So the
// receive loop asks the master, through a command connection (which does
// follow the failover), whether anyone listens on this client's presence
// channel; when nobody does, the connection is on another server (or
// silently dead) and is replaced.
func (p *Service) presenceLocked(c *psConn) []string {
	if p.presence == "" || c.key.sharded || c.presence {
		return nil
	}
	c.presence = true
	return []string{p.presence}
}

// presenceLost reports whether the master has nobody on this client's
// presence channel although c subscribed it more than a second ago.
func (p *Service) presenceLost(c *psConn) bool {
	p.mu.Lock()
	at := c.presenceAt
	p.mu.Unlock()
	if p.presence == "" || at.IsZero() || time.Since(at) < time.Second {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.health)
	defer cancel()
	n, err := p.rdb.PubSubNumSub(ctx, p.presence).Result()
	return err == nil && n[p.presence] == 0
}

// resubscribeUnconfirmed sends SUBSCRIBE again for the channels of c whose
// confirmation has not arrived within twice the health interval (a write
// lost around a reconnect). Sharded ones are re-routed, in case their slot
// moved.
func (p *Service) resubscribeUnconfirmed(c *psConn) {
	p.mu.Lock()
	var late []*channelEntry
	for _, e := range p.entries {
		if e.conn == c && !e.confirmed && time.Since(e.asked) >= 2*p.health {
			late = append(late, e)
			e.asked = time.Now()
		}
	}
	p.mu.Unlock()
	p.reportRerouted(p.rerouteAll(late))
}

// dispatch handles one message read from connection c.
func (p *Service) dispatch(c *psConn, msg any) {
	var fx effects
	p.mu.Lock()
	switch m := msg.(type) {
	case *redis.Message:
		p.messageLocked(c, m)
	case *redis.Subscription:
		p.subscriptionLocked(&fx, c, m)
	}
	p.mu.Unlock()
	p.flush(fx)
}

// subscriptionLocked handles a (un)subscribe confirmation, asked or not.
// Caller holds p.mu.
func (p *Service) subscriptionLocked(fx *effects, c *psConn, m *redis.Subscription) {
	if m.Channel == p.presence && m.Kind == "subscribe" {
		c.presenceAt = time.Now()
		return
	}
	e := p.entries[Key{Name: m.Channel, Sharded: c.key.sharded}]
	if e == nil || e.conn != c {
		return
	}
	switch m.Kind {
	case "sunsubscribe":
		// Unasked (the entry is still wanted): the slot left this node. An
		// unconfirmed entry's sunsubscribe is the answer to an earlier drop
		// of the same channel, not news.
		if e.confirmed {
			e.tellLocked(Listener.Lost)
			e.asked = time.Now()
			if !p.closed {
				p.loops.Add(1)
				go func() {
					defer p.loops.Done()
					if addr, ok := p.reroute(e, c.key.addr); ok {
						p.reportRerouted(addr, 1)
					}
				}()
			}
		}
	case "subscribe", "ssubscribe":
		e.tellLocked(Listener.Resumed)
		if e.confirmed {
			// Subscribed again after a reconnect: messages may have been
			// lost meanwhile, so every waiter polls once more, and every
			// listener that asked is told.
			e.wakeNow(-1)
			e.tellLocked(Listener.Resubscribed)
			return
		}
		e.confirmed = true
		close(e.ready)
		if e.refs == 0 {
			p.lingerLocked(fx, e)
		}
	}
}
