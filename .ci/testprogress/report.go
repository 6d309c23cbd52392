package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json), build events included.
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

// pkg is what the report knows of one package under test.
type pkg struct {
	name     string
	start    time.Time
	done     int                         // tests (and subtests) finished
	failed   []string                    // failed tests, in order
	skipped  int                         // tests skipped
	running  map[string]time.Time        // tests started and not finished
	output   map[string]*strings.Builder // per test ("" is the package's own)
	races    []string                    // output of passed tests that holds a race report
	finished bool
}

// report turns events into lines on w.
type report struct {
	w       io.Writer
	now     func() time.Time
	start   time.Time
	pkgs    map[string]*pkg
	order   []string // packages by first event
	ok      int
	fail    int
	noTests int
	tests   int
	skips   int
	failed  []string // "pkg TestX"
}

func newReport(w io.Writer, now func() time.Time) *report {
	return &report{w: w, now: now, start: now(), pkgs: map[string]*pkg{}}
}

// readLines sends every line of r to lines, then closes it.
func readLines(r io.Reader, lines chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		lines <- sc.Text()
	}
	close(lines)
}

// line handles one line of the go command's standard output: an event, or
// anything else (printed as it is).
func (r *report) line(s string) {
	var e event
	if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &e) != nil {
		fmt.Fprintln(r.w, s)
		return
	}
	switch e.Action {
	case "build-output":
		fmt.Fprint(r.w, e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	switch e.Action {
	case "start":
		p.start = r.now()
	case "run", "cont":
		p.running[e.Test] = r.now()
	case "pause": // t.Parallel: waits for the serial tests, not running
		delete(p.running, e.Test)
	case "output":
		b := p.output[e.Test]
		if b == nil {
			b = &strings.Builder{}
			p.output[e.Test] = b
		}
		b.WriteString(e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.finish(p, e)
			return
		}
		delete(p.running, e.Test)
		p.done++
		r.tests++
		switch e.Action {
		case "fail":
			p.failed = append(p.failed, e.Test)
			r.failed = append(r.failed, short(p.name)+" "+e.Test)
			fmt.Fprintf(r.w, "--- FAIL: %s %s (%.2fs)\n", short(p.name), e.Test, e.Elapsed)
			if b := p.output[e.Test]; b != nil {
				fmt.Fprint(r.w, indent(b.String()))
			}
		case "skip":
			p.skipped++
			r.skips++
		}
		// A race in a goroutine that outlived its test fails the package
		// ("race detected outside of test execution"), but its report is
		// in the output of whichever test was running then, which passed:
		// keep it for the package's failure.
		if b := p.output[e.Test]; e.Action != "fail" && b != nil && strings.Contains(b.String(), "WARNING: DATA RACE") {
			p.races = append(p.races, "--- race report printed during "+e.Test+"\n"+b.String())
		}
		delete(p.output, e.Test)
	}
}

func (r *report) pkg(name string) *pkg {
	p := r.pkgs[name]
	if p == nil {
		p = &pkg{name: name, start: r.now(), running: map[string]time.Time{}, output: map[string]*strings.Builder{}}
		r.pkgs[name] = p
		r.order = append(r.order, name)
	}
	return p
}

// finish prints the package's line (and, when it failed, the output that
// belongs to no finished test: a panic, a timeout, a leak check).
func (r *report) finish(p *pkg, e event) {
	p.finished = true
	own := ""
	if b := p.output[""]; b != nil {
		own = b.String()
	}
	switch {
	case e.Action == "skip" || strings.Contains(own, "[no test files]"):
		r.noTests++
		fmt.Fprintf(r.w, "?    %s [no test files]\n", p.name)
		return
	case e.Action == "pass":
		r.ok++
		fmt.Fprintf(r.w, "ok   %s %.1fs (%s)\n", p.name, e.Elapsed, counts(p))
		return
	}
	r.fail++
	fmt.Fprintf(r.w, "FAIL %s %.1fs (%s)\n", p.name, e.Elapsed, counts(p))
	var left []string
	for t := range p.output {
		if t != "" {
			left = append(left, t)
		}
	}
	sort.Strings(left)
	for _, t := range left { // tests that never finished: a panic or timeout ended the binary
		fmt.Fprintf(r.w, "--- unfinished: %s %s\n", short(p.name), t)
		fmt.Fprint(r.w, indent(p.output[t].String()))
	}
	if own != "" {
		fmt.Fprint(r.w, indent(own))
	}
	for _, race := range p.races {
		fmt.Fprint(r.w, indent(race))
	}
}

// progress prints a line per package still running.
func (r *report) progress() {
	for _, name := range r.order {
		p := r.pkgs[name]
		if p.finished || (len(p.running) == 0 && p.done == 0) {
			continue
		}
		var running []string
		for t := range p.running {
			if !strings.Contains(t, "/") {
				running = append(running, t)
			}
		}
		slices.Sort(running)
		now := ""
		if len(running) > 0 {
			if len(running) > 3 {
				running = append(running[:3], fmt.Sprintf("and %d more", len(running)-3))
			}
			now = "; running " + strings.Join(running, ", ")
		}
		fmt.Fprintf(r.w, "...  %s: %s, %s%s\n", short(p.name), counts(p), r.now().Sub(p.start).Round(time.Second), now)
	}
}

// summary prints the totals and the failed tests.
func (r *report) summary() {
	fmt.Fprintf(r.w, "\n%d packages ok, %d failed, %d without tests; %d tests finished (%d failed, %d skipped) in %s\n",
		r.ok, r.fail, r.noTests, r.tests, len(r.failed), r.skips, r.now().Sub(r.start).Round(time.Second))
	for _, f := range r.failed {
		fmt.Fprintf(r.w, "FAILED %s\n", f)
	}
}

func counts(p *pkg) string {
	s := fmt.Sprintf("%d tests", p.done)
	if len(p.failed) > 0 {
		s += fmt.Sprintf(", %d failed", len(p.failed))
	}
	if p.skipped > 0 {
		s += fmt.Sprintf(", %d skipped", p.skipped)
	}
	return s
}

// short names the module's root package "root" and drops the module path
// from the others.
func short(name string) string {
	const mod = "github.com/goredisson/redisson"
	if name == mod {
		return "root"
	}
	return strings.TrimPrefix(name, mod+"/")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	s = "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
	return s
}
