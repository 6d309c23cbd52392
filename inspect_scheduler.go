package redisson

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SchedulerInfo is what Redis holds of a Scheduler, read by
// Client.InspectScheduler.
type SchedulerInfo struct {
	Name string `json:"name"`
	// Now is the server's clock when it was read.
	Now  time.Time          `json:"now"`
	Jobs []SchedulerJobInfo `json:"jobs"`
}

// SchedulerJobInfo is one job of a SchedulerInfo.
type SchedulerJobInfo struct {
	Name string `json:"name"`
	// Schedule reads "every 1s" or "cron <expression>"; Definition is the
	// stored form, kept when this version cannot read it (Next is then
	// zero).
	Schedule     string        `json:"schedule"`
	Definition   string        `json:"definition"`
	CatchUp      CatchUpPolicy `json:"catch_up"`
	AllowOverlap bool          `json:"allow_overlap"`
	// LastFired is the latest instant fired (or skipped); Next the one
	// after it (in the past when instances are down or late).
	LastFired time.Time `json:"last_fired"`
	Next      time.Time `json:"next"`
	// Skipped counts the instants skipped (overlap, catch-up).
	Skipped int64 `json:"skipped"`
	// Running are the runs in progress: their tokens, holders (client
	// owner ids) and lease ends.
	Running []SchedulerRunInfo `json:"running"`
}

// SchedulerRunInfo is a run in progress of a SchedulerJobInfo.
type SchedulerRunInfo struct {
	Token    int64     `json:"token"`
	Holder   string    `json:"holder"`
	LeaseEnd time.Time `json:"lease_end"`
}

// InspectScheduler reads the scheduler called name: each job's schedule,
// last fired and next instant, skipped count and runs in progress (two
// script calls). It returns ErrNotFound when no job is defined, and the
// errors of InspectSemaphore.
func (c *Client) InspectScheduler(ctx context.Context, name string) (SchedulerInfo, error) {
	s := c.GetScheduler(name)
	if err := s.check(); err != nil {
		return SchedulerInfo{}, err
	}
	res, err := c.scripts.run(ctx, scriptSchedLoad, []string{s.defs, s.state}).StringSlice()
	if err != nil {
		return SchedulerInfo{}, s.wrap(err)
	}
	if len(res) < 2 || (len(res)-2)%4 != 0 {
		return SchedulerInfo{}, s.errorf("%w: load returned %d values", ErrUnexpectedReply, len(res))
	}
	info := SchedulerInfo{Name: name, Now: unixMicroStrings(res[0], res[1])}
	var keys []string
	for i := 2; i+3 < len(res); i += 4 {
		j := SchedulerJobInfo{Name: res[i], Definition: res[i+1], Running: []SchedulerRunInfo{}}
		j.Skipped, _ = strconv.ParseInt(res[i+3], 10, 64)
		if ms, err := strconv.ParseInt(res[i+2], 10, 64); err == nil {
			j.LastFired = time.UnixMilli(ms).UTC()
		}
		if sc, err := parseDef(j.Definition); err == nil {
			j.Schedule, j.CatchUp, j.AllowOverlap = sc.describe, sc.catchUp, sc.overlap
			j.Next = sc.next(j.LastFired)
		}
		info.Jobs = append(info.Jobs, j)
		keys = append(keys, s.runs(j.Name))
	}
	if len(info.Jobs) == 0 {
		return SchedulerInfo{}, s.errorf("%w", ErrNotFound)
	}
	sort.Slice(info.Jobs, func(a, b int) bool { return info.Jobs[a].Name < info.Jobs[b].Name })
	sort.Strings(keys) // a job's runs key sorts as its name does
	runs, err := c.scripts.run(ctx, scriptInspectSchedRuns, keys).StringSlice()
	if err != nil {
		return SchedulerInfo{}, s.wrap(err)
	}
	k := 2
	for i := range info.Jobs {
		if k >= len(runs) {
			return SchedulerInfo{}, s.errorf("%w: runs reply too short", ErrUnexpectedReply)
		}
		n, _ := strconv.Atoi(runs[k])
		k++
		for ; n > 0 && k+1 < len(runs); n-- {
			tok, holder, _ := strings.Cut(runs[k], " ")
			r := SchedulerRunInfo{Holder: holder}
			r.Token, _ = strconv.ParseInt(tok, 10, 64)
			if ms, err := strconv.ParseFloat(runs[k+1], 64); err == nil {
				r.LeaseEnd = time.UnixMilli(int64(ms)).UTC()
			}
			info.Jobs[i].Running = append(info.Jobs[i].Running, r)
			k += 2
		}
	}
	return info, nil
}

// unixMicroStrings reads the server's TIME reply (seconds, microseconds).
func unixMicroStrings(sec, usec string) time.Time {
	s, _ := strconv.ParseInt(sec, 10, 64)
	u, _ := strconv.ParseInt(usec, 10, 64)
	return time.UnixMicro(s*1_000_000 + u).UTC()
}
