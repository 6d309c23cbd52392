package redisson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// quickStartMarker is the README line after which the first ```go block is
// the quick-start program.
const quickStartMarker = "<!-- quickstart -->"

// TestReadmeQuickStartBuildsAndRuns does what the README's quick start tells
// a user to do: the program goes into a module of its own, which is built
// with the go command and run against a real redis-server, passed with the
// -redis flag. The module requires what this checkout's go.mod requires and
// starts from its go.sum, with the library replaced by the checkout, so the
// build needs nothing the checkout's own build did not.
func TestReadmeQuickStartBuildsAndRuns(t *testing.T) {
	t.Parallel() // its own module, build and server; mostly waiting, so it overlaps the other parallel tests
	src := readmeQuickStart(t)
	if formatted, err := format.Source(src); err != nil {
		t.Fatalf("README quick start does not parse: %v", err)
	} else if !bytes.Equal(formatted, src) {
		t.Fatalf("README quick start is not gofmt-ed; gofmt gives:\n%s", formatted)
	}
	checkout, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the README's program: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	dir := t.TempDir()
	goCmd := func(wd string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	goCmd(dir, "mod", "init", "example.com/quickstart")
	goCmd(dir, "mod", "edit", "-replace", "github.com/goredisson/redisson="+checkout)
	var mod struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(goCmd(checkout, "mod", "edit", "-json"), &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	requires := []string{"mod", "edit", "-require=github.com/goredisson/redisson@v0.0.0-00010101000000-000000000000"}
	for _, r := range mod.Require {
		requires = append(requires, "-require="+r.Path+"@"+r.Version)
	}
	goCmd(dir, requires...)
	sum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "quickstart")
	goCmd(dir, "build", "-o", bin, ".")

	srv := redistest.Start(t)
	runCtx, runCancel := context.WithTimeout(ctx, 30*time.Second)
	defer runCancel()
	cmd := exec.CommandContext(runCtx, bin, "-redis", srv.Addr())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if runCtx.Err() != nil {
		t.Fatalf("the quick start did not exit within 30s; stdout:\n%s\nstderr:\n%s", stdout.Bytes(), stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("the quick start failed: %v; stdout:\n%s\nstderr:\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	got := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	want := []string{ // prefixes: the RateLimit fields depend on the clock
		"report run 1 under quickstart:report",
		"200 OK ",
		"200 OK ",
		"429 Too Many Requests ",
	}
	if len(got) != len(want) {
		t.Fatalf("the quick start printed %d lines, want %d:\n%s", len(got), len(want), stdout.Bytes())
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("line %d: got %q, want it to start with %q", i+1, got[i], w)
		}
	}
}

// readmeQuickStart returns the first ```go block after quickStartMarker in
// README.md.
func readmeQuickStart(t *testing.T) []byte {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := quickStartBlock(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	return []byte(src)
}

// quickStartBlock extracts the program from the README's text.
func quickStartBlock(readme string) (string, error) {
	_, after, ok := strings.Cut(readme, "\n"+quickStartMarker+"\n")
	if !ok {
		return "", errors.New("no line " + quickStartMarker)
	}
	_, after, ok = strings.Cut(after, "\n```go\n")
	if !ok {
		return "", errors.New("no ```go block after " + quickStartMarker)
	}
	src, _, ok := strings.Cut(after, "\n```\n")
	if !ok {
		return "", errors.New("the quick start's ```go block does not end")
	}
	return src + "\n", nil
}

// TestReadmeExamplesExist fails when the README links an Example (by name,
// to the file that holds it) that does not exist there or has no Output
// comment, so the snippets' runnable counterparts stay real.
func TestReadmeExamplesExist(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile("\\[`(?:[a-z]+\\.)?(Example[A-Za-z0-9_]*)`\\]\\(([^)#]+_test\\.go)\\)").FindAllStringSubmatch(string(readme), -1)
	if len(links) < 6 {
		t.Fatalf("README links %d Examples; want one per use case (lock, limiter, gin, echo, queue, cache)", len(links))
	}
	fset := token.NewFileSet()
	for _, l := range links {
		name, path := l[1], l[2]
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("README links %s in %s: %v", name, path, err)
			continue
		}
		if !slices.Contains(exampleFuncs(file), name) {
			t.Errorf("README links %s in %s, which has no such Example with an // Output: comment", name, path)
		}
	}
}
