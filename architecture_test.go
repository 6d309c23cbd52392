package redisson

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// maxLibraryLines is the size rule for a library file (DEVELOPERS.md).
const maxLibraryLines = 450

// libraryFiles lists the root package's non-test Go files.
func libraryFiles(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if !strings.HasSuffix(f, "_test.go") {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files
}

// fileTableRow is one row of docs/architecture.md's file table:
// "| `name.go` | layer | job |".
var fileTableRow = regexp.MustCompile("^\\| `([a-z0-9_]+\\.go)` \\|")

// TestArchitectureFileTableMatchesTree keeps docs/architecture.md's file
// table true: every library file at the root has a row and every row names a
// file that exists, so that the page cannot go stale without this test
// failing.
func TestArchitectureFileTableMatchesTree(t *testing.T) {
	f, err := os.Open(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := fileTableRow.FindStringSubmatch(sc.Text()); m != nil {
			rows[m[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md has no file table rows (| `name.go` | layer | job |)")
	}
	for _, name := range libraryFiles(t) {
		if !rows[name] {
			t.Errorf("docs/architecture.md's file table has no row for %s", name)
		}
		delete(rows, name)
	}
	for name := range rows {
		t.Errorf("docs/architecture.md's file table names %s, which is not a library file", name)
	}
}

// TestNoLibraryFileTooLong enforces the size rule on every library file.
func TestNoLibraryFileTooLong(t *testing.T) {
	for _, name := range libraryFiles(t) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n > maxLibraryLines {
			t.Errorf("%s has %d lines, more than %d: split it by idea", name, n, maxLibraryLines)
		}
	}
}

// TestTypesInFilesNamedAfterThem checks the naming rule for the types the
// structure depends on: each is declared in the file its table entry names.
func TestTypesInFilesNamedAfterThem(t *testing.T) {
	want := map[string]string{
		"Client":            "client.go",
		"base":              "base.go",
		"Lock":              "rlock.go",
		"lockCore":          "lockcore.go",
		"hold":              "hold.go",
		"renewSpec":         "hold.go",
		"lazyLoop":          "lazyloop.go",
		"watchdog":          "watchdog.go",
		"scripts":           "scriptcache.go",
		"script":            "script.go",
		"call":              "call.go",
		"pubsubService":     "pubsub.go",
		"Semaphore":         "semaphore.go",
		"semCall":           "semcall.go",
		"RateLimiter":       "ratelimit.go",
		"SortedSet":         "rsortedset.go",
		"SortedSetIterator": "sortedsetiterator.go",
	}
	fs := token.NewFileSet()
	got := map[string]string{}
	for _, name := range libraryFiles(t) {
		f, err := parser.ParseFile(fs, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				got[s.(*ast.TypeSpec).Name.Name] = name
			}
		}
	}
	for typ, file := range want {
		if got[typ] != file {
			t.Errorf("type %s is declared in %q, want %s", typ, got[typ], file)
		}
	}
}
