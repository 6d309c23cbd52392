// Package demoredis runs the embedded Redis of the demos: a miniredis whose
// clock follows real time. miniredis expires keys (lock leases, rate-limit
// windows) only when its clock is moved forward, so a goroutine moves it by
// the real elapsed time every ~10ms.
package demoredis

import (
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Server is an embedded miniredis with a real-time clock.
type Server struct {
	*miniredis.Miniredis
	stop chan struct{}
	wg   sync.WaitGroup
}

// Start starts a Server on a free loopback port.
func Start() (*Server, error) {
	m, err := miniredis.Run()
	if err != nil {
		return nil, err
	}
	s := &Server{Miniredis: m, stop: make(chan struct{})}
	s.wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-s.stop:
				return
			case now := <-tick.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	})
	return s, nil
}

// Close stops the clock goroutine and the server.
func (s *Server) Close() {
	close(s.stop)
	s.wg.Wait()
	s.Miniredis.Close()
}
