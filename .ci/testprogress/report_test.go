package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReportPrintsFailuresAndSummary(t *testing.T) {
	var out strings.Builder
	clock := time.Unix(0, 0)
	r := newReport(&out, func() time.Time { return clock })
	const p = `"Package":"github.com/goredisson/redisson"`
	for _, l := range []string{
		`{"Action":"start",` + p + `}`,
		`{"Action":"run",` + p + `,"Test":"TestGood"}`,
		`{"Action":"output",` + p + `,"Test":"TestGood","Output":"good noise\n"}`,
		`{"Action":"pass",` + p + `,"Test":"TestGood","Elapsed":0.1}`,
		`{"Action":"run",` + p + `,"Test":"TestBad"}`,
		`{"Action":"run",` + p + `,"Test":"TestHangs"}`,
		`{"Action":"run",` + p + `,"Test":"TestParallel"}`,
		`{"Action":"pause",` + p + `,"Test":"TestParallel"}`,
		`{"Action":"output",` + p + `,"Test":"TestBad","Output":"bad_test.go:9: got 1, want 2\n"}`,
		`{"Action":"fail",` + p + `,"Test":"TestBad","Elapsed":0.2}`,
		`not json: printed as it is`,
	} {
		r.line(l)
	}
	clock = clock.Add(95 * time.Second)
	r.progress()
	r.line(`{"Action":"output",` + p + `,"Test":"TestHangs","Output":"panic: test timed out after 1s\n"}`)
	r.line(`{"Action":"fail",` + p + `,"Elapsed":95}`)
	r.summary()
	got := out.String()
	for _, want := range []string{
		"--- FAIL: root TestBad (0.20s)\n    bad_test.go:9: got 1, want 2\n",
		"not json: printed as it is\n",
		"...  root: 2 tests, 1 failed, 1m35s; running TestHangs\n",
		"FAIL github.com/goredisson/redisson 95.0s (2 tests, 1 failed)\n",
		"--- unfinished: root TestHangs\n    panic: test timed out after 1s\n",
		"0 packages ok, 1 failed, 0 without tests; 2 tests finished (1 failed, 0 skipped) in 1m35s\n",
		"FAILED root TestBad\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "good noise") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

// A race report printed while a test that passed was running (a goroutine
// that outlived an earlier test) is printed with the package's failure.
func TestReportKeepsRaceOutsideTests(t *testing.T) {
	var out strings.Builder
	r := newReport(&out, time.Now)
	const p = `"Package":"github.com/goredisson/redisson"`
	for _, l := range []string{
		`{"Action":"start",` + p + `}`,
		`{"Action":"run",` + p + `,"Test":"TestQuiet"}`,
		`{"Action":"output",` + p + `,"Test":"TestQuiet","Output":"quiet noise\n"}`,
		`{"Action":"pass",` + p + `,"Test":"TestQuiet","Elapsed":0.1}`,
		`{"Action":"run",` + p + `,"Test":"TestInnocent"}`,
		`{"Action":"output",` + p + `,"Test":"TestInnocent","Output":"WARNING: DATA RACE\nWrite at 0x1 by goroutine 7:\n"}`,
		`{"Action":"pass",` + p + `,"Test":"TestInnocent","Elapsed":0.1}`,
		`{"Action":"output",` + p + `,"Output":"testing: race detected outside of test execution\n"}`,
		`{"Action":"fail",` + p + `,"Elapsed":1}`,
	} {
		r.line(l)
	}
	got := out.String()
	for _, want := range []string{"race detected outside of test execution", "--- race report printed during TestInnocent", "Write at 0x1 by goroutine 7:"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet noise") {
		t.Errorf("a passing test's output without a race was printed:\n%s", got)
	}
}

func TestRunExitsWithCommandStatus(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -9 $$", 128 + 9}} {
		if got := run([]string{"sh", "-c", c.script}, time.Hour, io.Discard); got != c.want {
			t.Errorf("run(sh -c %q) = %d, want %d", c.script, got, c.want)
		}
	}
}

func TestPrefixWriterLabelsEveryLine(t *testing.T) {
	var b strings.Builder
	w := &prefixWriter{w: &b, prefix: "[newest] ", start: true}
	fmt.Fprint(w, "ok   a 1.0s\nFAIL b")
	fmt.Fprint(w, " 2.0s\n\n")
	want := "[newest] ok   a 1.0s\n[newest] FAIL b 2.0s\n[newest] \n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}
