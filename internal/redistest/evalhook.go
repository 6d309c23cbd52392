package redistest

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// EvalHook is a go-redis hook that counts the EVALSHAs a client sends alone
// and in pipelines, and can hold plain EVALSHAs after their reply (Hold), so
// that the send they occupy stays busy and the calls after them queue. Add
// it with AddHook; it is safe for concurrent use.
type EvalHook struct {
	Plain     atomic.Int64 // EVALSHAs sent as a command of their own
	Pipelines atomic.Int64 // pipelines with at least one EVALSHA
	Piped     atomic.Int64 // EVALSHAs in them
	Held      atomic.Int64 // plain EVALSHAs waiting on the gate now

	mu   sync.Mutex
	gate chan struct{} // non-nil: plain EVALSHAs wait for it to close
	keys map[string]int
}

// NewEvalHook returns a hook that has counted nothing.
func NewEvalHook() *EvalHook { return &EvalHook{keys: map[string]int{}} }

// Hold makes the plain EVALSHAs from now on wait, after their reply, until
// the returned function is called (once or more).
func (h *EvalHook) Hold() (release func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	h.gate = ch
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.gate = nil
			h.mu.Unlock()
			close(ch)
		})
	}
}

// Sent returns how many EVALSHAs with first key k the client sent.
func (h *EvalHook) Sent(k string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.keys[k]
}

func (h *EvalHook) saw(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) > 3 {
		if k, ok := args[3].(string); ok {
			h.mu.Lock()
			h.keys[k]++
			h.mu.Unlock()
		}
	}
}

// DialHook is go-redis's; it changes nothing.
func (h *EvalHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts a plain EVALSHA and holds it while Hold says so.
func (h *EvalHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "evalsha" {
			return next(ctx, cmd)
		}
		h.Plain.Add(1)
		h.saw(cmd)
		err := next(ctx, cmd)
		h.mu.Lock()
		gate := h.gate
		h.mu.Unlock()
		if gate != nil {
			h.Held.Add(1)
			<-gate
			h.Held.Add(-1)
		}
		return err
	}
}

// ProcessPipelineHook counts a pipeline's EVALSHAs.
func (h *EvalHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := 0
		for _, c := range cmds {
			if c.Name() == "evalsha" {
				n++
				h.saw(c)
			}
		}
		if n > 0 {
			h.Pipelines.Add(1)
			h.Piped.Add(int64(n))
		}
		return next(ctx, cmds)
	}
}
