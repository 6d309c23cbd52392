package redisson

import (
	"context"
	"strings"
	"sync"
)

// schedulerKind names a scheduler in its errors and operations.
const schedulerKind = "scheduler"

// Scheduler fires named jobs on cron expressions or fixed intervals, each
// (job, instant) once across every instance that runs it, judged on the
// Redis server's clock whatever the instances' clocks say.
//
// Add and Remove define jobs in Redis (redisson_scheduler:{name}, a hash of
// definitions, beside redisson_scheduler_state:{name}, each job's last fired
// instant), so the schedule survives restarts and is shared by every
// instance; Handle registers this process's function for a job; Run fires
// the jobs this process has a handler for until its context ends. An
// instant fires in one script call that reads the server's clock, refuses
// an instant still in the future or already fired, and otherwise records it
// as fired and gives the caller the run's lease (an entry of
// redisson_scheduler_run:{name}:<job>, renewed by the client's watchdog
// while the handler runs) and a fencing token. See Run for what a run gets,
// and JobSpec for overlap and the catch-up policy.
//
// A Scheduler is safe for concurrent use. The schedule is this library's:
// Redisson (Java) has no counterpart that could share it.
type Scheduler struct {
	base
	defs, state, tokens, channel string

	mu       sync.Mutex
	handlers map[string]JobHandler
	changed  chan struct{} // a Handle call: the running loops re-read the jobs
	fireLog  string        // tests only: the list the fire script appends to
}

// JobHandler runs one fired instant of a job. Its context is cancelled when
// the run's lease is lost (cause: an error matching ErrRunLeaseLost), when
// the client closes, or when Scheduler.Run's context ends.
type JobHandler func(ctx context.Context, run JobRun) error

// GetScheduler returns a handle for the scheduler called name. It does no
// I/O; an empty name makes every method return ErrEmptyName. On Redis
// Cluster a name containing '{' must carry a complete hash tag; other such
// names return ErrInvalidName.
func (c *Client) GetScheduler(name string) *Scheduler {
	s := &Scheduler{
		defs:     prefixName("redisson_scheduler", name),
		state:    prefixName("redisson_scheduler_state", name),
		tokens:   prefixName("redisson_scheduler_token", name),
		channel:  prefixName("redisson_scheduler__channel", name),
		handlers: make(map[string]JobHandler),
		changed:  make(chan struct{}, 1),
	}
	s.base = newBase(c, schedulerKind, name, nil, s.defs, s.state, s.tokens, s.channel)
	return s
}

// Name returns the scheduler's name.
func (s *Scheduler) Name() string { return s.name }

// runs returns the key of job's runs in progress.
func (s *Scheduler) runs(job string) string {
	return prefixName("redisson_scheduler_run", s.name) + ":" + job
}

// Add defines a job, or redefines it: the running instances pick the
// change up at once (by a message on the scheduler's channel). A new job
// fires from its first instant after the server's clock now; a redefined
// one keeps its last fired instant. It returns an error matching
// ErrInvalidSchedule for a bad spec (nothing is sent), ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, ctx's error, or a Redis
// error.
func (s *Scheduler) Add(ctx context.Context, spec JobSpec) (err error) {
	ctx, rec, err := s.open(ctx, opSchedulerAdd)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	sc, err := spec.compile()
	if err != nil {
		return s.wrap(err)
	}
	err = s.c.scripts.run(ctx, scriptSchedAdd, []string{s.defs, s.state, s.channel},
		spec.Name, sc.def, s.c.pubsub.publishArg(ctx)).Err()
	if err != nil {
		return s.wrap(err)
	}
	return nil
}

// Remove deletes a job's definition and state; the running instances stop
// firing it at once. A run in progress is not cancelled. It reports whether
// the job was defined. It returns an error matching ErrInvalidSchedule for
// an empty job name, ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, ctx's error, or a Redis error.
func (s *Scheduler) Remove(ctx context.Context, job string) (_ bool, err error) {
	ctx, rec, err := s.open(ctx, opSchedulerRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	if err := checkJobName(job); err != nil {
		return false, s.wrap(err)
	}
	n, err := s.c.scripts.run(ctx, scriptSchedRemove, []string{s.defs, s.state, s.channel},
		job, s.c.pubsub.publishArg(ctx)).Int64()
	if err != nil {
		return false, s.wrap(err)
	}
	return n == 1, nil
}

// Handle registers fn as this process's handler of job (replacing an
// earlier one; nil removes it). Only jobs with a handler are fired by this
// process's Run, which picks the change up at once. It does no I/O. It
// returns an error matching ErrInvalidSchedule for an empty job name or
// one with a line break.
func (s *Scheduler) Handle(job string, fn JobHandler) error {
	if err := checkJobName(job); err != nil {
		return s.wrap(err)
	}
	s.mu.Lock()
	if fn == nil {
		delete(s.handlers, job)
	} else {
		s.handlers[job] = fn
	}
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return nil
}

// handler returns job's handler, or nil.
func (s *Scheduler) handler(job string) JobHandler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handlers[job]
}

// checkJobName checks a job's name as JobSpec.Name.
func checkJobName(job string) error {
	if job == "" || strings.Contains(job, "\n") {
		return invalidOption(ErrInvalidSchedule, "job name", job, "not empty, without a line break")
	}
	return nil
}
