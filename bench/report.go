package main

import (
	"fmt"
	"math"
	"strings"
)

// kind tells the rows apart for the ratio columns.
type kind int

const (
	kindOurs kind = iota
	kindPeer
	kindFloor
)

// row is one library (with one setting) in one table: its metrics per round.
type row struct {
	lib, settings string
	group         string // rows compared for "vs best peer" (e.g. the algorithm); "" = all
	kind          kind
	runs          []map[string]float64
	errs          int
	firstErr      error
}

func (r *row) add(m map[string]float64, err error) {
	if err != nil {
		r.errs++
		if r.firstErr == nil {
			r.firstErr = err
		}
		return
	}
	r.runs = append(r.runs, m)
}

func (r *row) metric(key string) spread {
	var xs []float64
	for _, m := range r.runs {
		if v, ok := m[key]; ok && !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	return summarize(xs)
}

// col is one column of a table: a metric, shown as its median over rounds,
// with min-max when spread is set.
type col struct {
	key, head string
	format    string // fmt verb for one value, e.g. "%.0f"
	spread    bool
}

// table is one Markdown table of a scenario.
type table struct {
	title, note string
	primary     string // the metric the ratio columns divide
	higher      bool   // whether a higher primary is better
	ratios      bool   // show "vs best peer" and "vs floor"
	cols        []col
	rows        []*row
}

func (t *table) row(lib, settings string, k kind) *row {
	r := &row{lib: lib, settings: settings, kind: k}
	t.rows = append(t.rows, r)
	return r
}

func (t *table) bestPeer(group string) (float64, bool) {
	best, found := 0.0, false
	for pass := 0; pass < 2 && !found; pass++ {
		for _, r := range t.rows {
			if r.kind != kindPeer || len(r.runs) == 0 || (pass == 0 && r.group != group) {
				continue
			}
			v := r.metric(t.primary).med
			if !found || (t.higher && v > best) || (!t.higher && v < best) {
				best, found = v, true
			}
		}
	}
	return best, found
}

func (t *table) floor() (float64, bool) {
	for _, r := range t.rows {
		if r.kind == kindFloor && len(r.runs) > 0 {
			return r.metric(t.primary).med, true
		}
	}
	return 0, false
}

// errors returns one line per row that failed in some round.
func (t *table) errors() []string {
	var out []string
	for _, r := range t.rows {
		if r.errs > 0 {
			out = append(out, fmt.Sprintf("%s %s (%s): %d failed run(s): %v", t.title, r.lib, r.settings, r.errs, r.firstErr))
		}
	}
	return out
}

func (t *table) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#### %s\n\n", t.title)
	if t.note != "" {
		fmt.Fprintf(&b, "%s\n\n", t.note)
	}
	head := []string{"library", "settings"}
	for _, c := range t.cols {
		head = append(head, c.head)
	}
	if t.ratios {
		head = append(head, "vs best peer", "vs floor")
	}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	floor, hasFloor := t.floor()
	for _, r := range t.rows {
		cells := []string{r.lib, r.settings}
		for _, c := range t.cols {
			s := r.metric(c.key)
			switch {
			case len(r.runs) == 0:
				cells = append(cells, "failed")
			case c.spread && s.lo != s.hi:
				cells = append(cells, fmt.Sprintf(c.format+" ("+c.format+"-"+c.format+")", s.med, s.lo, s.hi))
			default:
				cells = append(cells, fmt.Sprintf(c.format, s.med))
			}
		}
		if t.ratios {
			v := r.metric(t.primary).med
			best, ok := t.bestPeer(r.group)
			cells = append(cells, ratio(v, best, ok && r.kind != kindFloor), ratio(v, floor, hasFloor && len(r.runs) > 0))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	b.WriteString("\n")
	return b.String()
}

func ratio(v, ref float64, ok bool) string {
	if !ok || ref == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", v/ref)
}
