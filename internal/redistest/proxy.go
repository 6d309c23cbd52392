package redistest

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is an in-process TCP proxy on 127.0.0.1 for fault injection between
// a client and a server. Each accepted connection is forwarded to the target
// by two goroutines, one per direction, that read a chunk (whatever one Read
// returns, up to 32 KiB) and write it to the other side. When either side
// closes or fails, both sides are closed (no half-close). All methods are
// safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener
	ctx    context.Context // canceled by Close; aborts dials
	cancel context.CancelFunc
	wg     sync.WaitGroup

	dropArmed atomic.Bool
	dropped   atomic.Int64
	dropWith  atomic.Pointer[[]byte] // DropNextReplyWith's marker; nil: any chunk
	latency   atomic.Int64           // time.Duration

	mu     sync.Mutex
	closed bool
	conns  map[*proxyConn]struct{}
	heal   chan struct{} // non-nil while partitioned, closed when healed
	// One-way partitions, like heal: up is client to server, down is
	// server to client.
	healUp, healDown chan struct{}
}

// proxyConn is one proxied client connection and its server connection.
type proxyConn struct {
	client, server net.Conn
	done           chan struct{}
	once           sync.Once
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.client.Close()
		_ = c.server.Close()
	})
}

// NewProxy starts a proxy listening on 127.0.0.1:0 that forwards to target
// ("host:port"). The target is dialed once per accepted connection, so the
// target may be restarted between connections. The proxy is closed by
// tb.Cleanup (see Close).
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("redistest: proxy listen: %v", err)
	}
	p := &Proxy{target: target, ln: ln, conns: make(map[*proxyConn]struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go p.acceptLoop()
	tb.Cleanup(p.Close)
	return p
}

// Addr returns the address clients should connect to, "127.0.0.1:<port>".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// DropNextReply arms the proxy so that the next chunk read from the server
// side of any connection is discarded (never written to the client) and
// that connection is closed on both sides. The server has executed the
// command, but the client never sees the reply and reads EOF. Arm it only
// once the client's connection is established and idle, otherwise the
// dropped chunk may be a handshake reply (HELLO, CLIENT SETINFO) or belong
// to another connection. Arming twice before a drop still drops one chunk.
func (p *Proxy) DropNextReply() { p.dropWith.Store(nil); p.dropArmed.Store(true) }

// DropNextReplyWith is DropNextReply for the next chunk from the server
// that contains marker: chunks without it (a new connection's handshake,
// another connection's replies) pass, so it may be armed at any time.
func (p *Proxy) DropNextReplyWith(marker string) {
	m := []byte(marker)
	p.dropWith.Store(&m)
	p.dropArmed.Store(true)
}

// Dropped returns how many chunks DropNextReply has dropped so far.
func (p *Proxy) Dropped() int { return int(p.dropped.Load()) }

// SetLatency delays every chunk by d before it is forwarded, in both
// directions (a request/reply round trip costs at least 2*d). Zero disables
// it. The new value applies to chunks read after the call.
func (p *Proxy) SetLatency(d time.Duration) { p.latency.Store(int64(d)) }

// Partition turns a network partition on or off. While on, connections stay
// open and keep being accepted and dialed, but no bytes are forwarded in
// either direction: each direction reads at most one chunk and holds it
// (bytes are neither forwarded nor dropped) until the partition is turned
// off, when held chunks are delivered in order, or until the connection is
// closed (CloseAll, Close, or the other side closing), when they are
// discarded. Clients therefore see timeouts, not errors.
func (p *Proxy) Partition(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && p.heal == nil:
		p.heal = make(chan struct{})
	case !on && p.heal != nil:
		close(p.heal)
		p.heal = nil
	}
}

// Direction is one direction of the proxied traffic.
type Direction int

// The directions of PartitionOneWay.
const (
	ToServer Direction = iota // client to server: requests
	ToClient                  // server to client: replies and pushes
)

// PartitionOneWay turns a one-way partition on or off: like Partition, but
// only bytes travelling in direction d are held (the other direction flows).
// With ToClient the server executes every request and the client sees none
// of the replies; with ToServer the client's requests never arrive. It is
// independent of Partition: a chunk flows when neither holds it.
func (p *Proxy) PartitionOneWay(d Direction, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	heal := &p.healUp
	if d == ToClient {
		heal = &p.healDown
	}
	switch {
	case on && *heal == nil:
		*heal = make(chan struct{})
	case !on && *heal != nil:
		close(*heal)
		*heal = nil
	}
}

// Reset aborts every current connection with a TCP reset (RST, by closing
// with SO_LINGER 0) on both sides, as a crashed middlebox or a killed peer
// would: the client sees "connection reset by peer", the server a reset
// too. The proxy keeps accepting new connections.
func (p *Proxy) Reset() {
	p.mu.Lock()
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		for _, conn := range []net.Conn{c.client, c.server} {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
		}
		c.close()
	}
}

// CloseAll closes every current connection on both sides (like a
// connection reset); the proxy keeps accepting new connections.
func (p *Proxy) CloseAll() {
	p.mu.Lock()
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Conns returns the number of currently proxied connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops the proxy: it closes the listener and every connection and
// waits for all of its goroutines to exit. Closing twice is harmless.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	_ = p.ln.Close()
	p.CloseAll()
	p.wg.Wait()
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || p.ctx.Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE: back off
			continue
		}
		p.wg.Add(1)
		go p.handle(conn)
	}
}

// handle dials the target for client and forwards both directions.
func (p *Proxy) handle(client net.Conn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: 5 * time.Second}
	server, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	c := &proxyConn{client: client, server: server, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()

	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.pipe(c, c.client, c.server, false)
	}()
	p.pipe(c, c.server, c.client, true)
}

// dropMatches reports whether chunk is one an armed drop takes.
func (p *Proxy) dropMatches(chunk []byte) bool {
	m := p.dropWith.Load()
	return m == nil || bytes.Contains(chunk, *m)
}

// pipe copies chunks from src to dst until either fails; then it closes c.
func (p *Proxy) pipe(c *proxyConn, src, dst net.Conn, fromServer bool) {
	defer c.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if fromServer && p.dropArmed.Load() && p.dropMatches(buf[:n]) && p.dropArmed.CompareAndSwap(true, false) {
				p.dropped.Add(1)
				return
			}
			if !p.hold(c, fromServer) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// hold applies latency and partitions to one chunk travelling to the
// client (fromServer) or to the server; false means c was closed meanwhile.
func (p *Proxy) hold(c *proxyConn, fromServer bool) bool {
	if d := time.Duration(p.latency.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.done:
			t.Stop()
			return false
		}
	}
	for {
		p.mu.Lock()
		heal := p.heal
		if heal == nil && fromServer {
			heal = p.healDown
		} else if heal == nil {
			heal = p.healUp
		}
		p.mu.Unlock()
		if heal == nil {
			return true
		}
		select {
		case <-heal:
		case <-c.done:
			return false
		}
	}
}
