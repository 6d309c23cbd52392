package pubsub

import (
	"context"
	"time"
)

// channelsOnLocked counts the channels subscribed on c. Caller holds p.mu.
func (p *Service) channelsOnLocked(c *psConn) int {
	n := 0
	for _, e := range p.entries {
		if e.conn == c {
			n++
		}
	}
	return n
}

// reroute subscribes entry e again, on the connection its channel belongs
// to now. A lookup that fails leaves e unconfirmed on a connection chosen
// as best as possible; resubscribeUnconfirmed and later errors retry.
//
// away names the node that just unsubscribed e's channel (its slot left
// it), "" otherwise: go-redis's slot map, which nothing refreshed yet,
// would name it again, and its MOVED answer would cost the replacement of
// the whole connection. The map is reloaded until it names another node,
// for up to p.health.
//
// It returns the node e is subscribed on now and whether that is another
// node than before.
func (p *Service) reroute(e *channelEntry, away string) (addr string, moved bool) {
	addr, err := p.nodeAway(e.key, away)
	var fx effects
	p.mu.Lock()
	if !p.closed && p.entries[e.key] == e {
		if err != nil {
			addr = e.conn.key.addr
		}
		c := p.connLocked(connKey{sharded: e.key.Sharded, addr: addr})
		if c != e.conn {
			p.rerouted++
			moved = e.conn == nil || e.conn.key.addr != addr
		}
		e.conn = c
		e.asked = time.Now()
		channels := append(p.presenceLocked(c), e.key.Name)
		p.queueLocked(&fx, c, func() { c.subscribe(channels...) })
	}
	p.mu.Unlock()
	p.flush(fx)
	return addr, moved
}

// rerouteAll reroutes every entry of es (see reroute) and returns the node
// the first one moved to another node is on now, and how many moved.
func (p *Service) rerouteAll(es []*channelEntry) (to string, n int) {
	for _, e := range es {
		if addr, ok := p.reroute(e, ""); ok {
			if n == 0 {
				to = addr
			}
			n++
		}
	}
	return to, n
}

// reportRerouted reports channels moved to another node (to, the first one's).
func (p *Service) reportRerouted(to string, n int) {
	if n > 0 {
		p.tell(Report{Kind: Rerouted, Node: to, Channels: n})
	}
}

// nodeAway is nodeOf, reloading the cluster's slot map while it still
// names away, for up to p.health.
func (p *Service) nodeAway(key Key, away string) (string, error) {
	deadline := time.Now().Add(p.health)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), p.health)
		addr, err := p.nodeOf(ctx, key)
		cancel()
		if err != nil || away == "" || addr != away || p.cluster == nil || time.Now().After(deadline) {
			return addr, err
		}
		p.cluster.ReloadState(context.Background())
		select {
		case <-p.closing:
			return addr, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}
