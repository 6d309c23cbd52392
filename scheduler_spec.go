package redisson

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// CatchUpPolicy says what a Scheduler job does with the instants it
// missed, when no instance could fire them in time (a full outage, every
// instance stopped): instants that are already due when an instance gets
// to them, with a later instant due too.
type CatchUpPolicy uint8

const (
	// CatchUpSkip (the default) fires only the latest missed instant and
	// skips the earlier ones (counted in the job's skipped instants).
	CatchUpSkip CatchUpPolicy = iota
	// CatchUpAll fires every missed instant, in order, up to
	// JobSpec.MaxCatchUp of them (the latest ones); earlier ones are
	// skipped. A job that does not allow overlap fires them one after
	// the other, each once the instance's run before it has ended.
	CatchUpAll
)

// JobSpec defines a Scheduler job. Exactly one of Cron and Every is set.
type JobSpec struct {
	// Name names the job: what Handle and Remove name it by. Not empty; no
	// line break.
	Name string
	// Cron is a standard 5-field cron expression (minute, hour, day of
	// month, month, day of week) or a descriptor (@hourly, @daily, @every
	// 90s, ...), as robfig/cron/v3's ParseStandard reads it, in UTC unless
	// it starts with CRON_TZ=<zone> (or TZ=<zone>).
	Cron string
	// Every fires the job at every multiple of Every since the Unix epoch
	// (UTC): at least a millisecond, in whole milliseconds.
	Every time.Duration
	// CatchUp is the missed-instant policy (default CatchUpSkip).
	CatchUp CatchUpPolicy
	// MaxCatchUp bounds CatchUpAll: at most this many missed instants are
	// fired (default 0: 100).
	MaxCatchUp int
	// AllowOverlap lets a run start while an earlier run of the job still
	// holds its lease. Without it such an instant is skipped (counted as
	// skipped).
	AllowOverlap bool
}

// defaultMaxCatchUp is CatchUpAll's bound when JobSpec.MaxCatchUp is 0.
const defaultMaxCatchUp = 100

// schedule is a parsed job definition.
type schedule struct {
	def      string // the stored definition
	every    time.Duration
	cron     cron.Schedule
	catchUp  CatchUpPolicy
	max      int
	overlap  bool
	describe string // "every 1s" or "cron */5 * * * *"
}

// cronParser reads standard cron expressions and descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// compile checks spec and returns its schedule; the error matches
// ErrInvalidSchedule.
func (spec JobSpec) compile() (*schedule, error) {
	bad := func(field string, v any, rule string) error {
		return invalidOption(ErrInvalidSchedule, field, v, rule)
	}
	switch {
	case spec.Name == "" || strings.ContainsAny(spec.Name, "\n"):
		return nil, bad("name", strconv.Quote(spec.Name), "not empty, without a line break")
	case (spec.Cron == "") == (spec.Every == 0):
		return nil, bad("cron/every", fmt.Sprintf("%q/%v", spec.Cron, spec.Every), "exactly one of them")
	case spec.Every != 0 && (spec.Every < time.Millisecond || spec.Every%time.Millisecond != 0):
		return nil, bad("every", spec.Every, "whole milliseconds, at least 1ms")
	case spec.CatchUp > CatchUpAll:
		return nil, bad("catch-up policy", spec.CatchUp, "CatchUpSkip or CatchUpAll")
	case spec.MaxCatchUp < 0:
		return nil, bad("max catch-up", spec.MaxCatchUp, "at least 0")
	case strings.ContainsAny(spec.Cron, "\n"):
		return nil, bad("cron", strconv.Quote(spec.Cron), "one line")
	}
	line := "every " + strconv.FormatInt(spec.Every.Milliseconds(), 10)
	if spec.Cron != "" {
		line = "cron " + spec.Cron
	}
	max := spec.MaxCatchUp
	if max == 0 {
		max = defaultMaxCatchUp
	}
	overlap := 0
	if spec.AllowOverlap {
		overlap = 1
	}
	// The fire script reads the last line.
	def := fmt.Sprintf("v1\n%s\ncatchup %d %d\noverlap %d", line, spec.CatchUp, max, overlap)
	s, err := parseDef(def)
	if err != nil {
		return nil, bad("cron", strconv.Quote(spec.Cron), err.Error())
	}
	return s, nil
}

// parseDef reads a stored definition.
func parseDef(def string) (*schedule, error) {
	f := strings.Split(def, "\n")
	if len(f) != 4 || f[0] != "v1" {
		return nil, fmt.Errorf("unknown definition %q", def)
	}
	s := &schedule{def: def, describe: f[1]}
	kind, arg, _ := strings.Cut(f[1], " ")
	switch kind {
	case "every":
		ms, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || ms < 1 {
			return nil, fmt.Errorf("bad interval %q", arg)
		}
		s.every = time.Duration(ms) * time.Millisecond
		s.describe = "every " + s.every.String()
	case "cron":
		expr := arg
		if !strings.HasPrefix(expr, "CRON_TZ=") && !strings.HasPrefix(expr, "TZ=") {
			expr = "CRON_TZ=UTC " + expr
		}
		c, err := cronParser.Parse(expr)
		if err != nil {
			return nil, err
		}
		s.cron = c
	default:
		return nil, fmt.Errorf("unknown schedule %q", f[1])
	}
	var policy int
	if _, err := fmt.Sscanf(f[2], "catchup %d %d", &policy, &s.max); err != nil || policy > int(CatchUpAll) || s.max < 1 {
		return nil, fmt.Errorf("bad catch-up %q", f[2])
	}
	s.catchUp = CatchUpPolicy(policy)
	switch f[3] {
	case "overlap 0":
	case "overlap 1":
		s.overlap = true
	default:
		return nil, fmt.Errorf("bad overlap %q", f[3])
	}
	return s, nil
}

// next returns the first instant after t (zero when there is none: a cron
// expression that never matches).
func (s *schedule) next(t time.Time) time.Time {
	if s.every > 0 {
		ms := t.UnixMilli()
		step := s.every.Milliseconds()
		return time.UnixMilli((ms/step + 1) * step).UTC()
	}
	return s.cron.Next(t.UTC())
}

// due returns the instant to fire after last, given the server's clock now:
// the first instant after last, or by the catch-up policy a later one when
// several are due, and how many earlier instants that skips. ok is false
// when there is none.
func (s *schedule) due(last, now time.Time) (instant time.Time, skipped int, ok bool) {
	first := s.next(last)
	if first.IsZero() {
		return first, 0, false
	}
	if first.After(now) {
		return first, 0, true
	}
	keep := 1
	if s.catchUp == CatchUpAll {
		keep = s.max
	}
	if s.every > 0 {
		n := int((now.UnixMilli()-first.UnixMilli())/s.every.Milliseconds()) + 1 // instants due
		if n <= keep {
			return first, 0, true
		}
		return first.Add(time.Duration(n-keep) * s.every), n - keep, true
	}
	// A ring of the latest keep instants due.
	ring := make([]time.Time, 0, min(keep, 64))
	n := 0
	for t := first; !t.IsZero() && !t.After(now); t = s.next(t) {
		if len(ring) < keep {
			ring = append(ring, t)
		} else {
			ring[n%keep] = t
		}
		n++
	}
	if n <= keep {
		return ring[0], 0, true
	}
	return ring[n%keep], n - keep, true
}
