package scripting

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
)

// Script is one Lua script with its SHA1, computed once. A Script is
// immutable and safe for concurrent use.
type Script struct {
	name string
	src  string // the preludes the script names, then the script
	sha  string // of src
	// shaArg is sha boxed once, for the command lines built by Argv.
	shaArg any
}

// New returns the script name whose source is src.
func New(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	sha := hex.EncodeToString(sum[:])
	return &Script{name: name, src: src, sha: sha, shaArg: sha}
}

// Load returns the script <name>.lua of fsys. A line of its header (the
// comment lines it opens with) of the form
//
//	-- prelude: release_latch, ...
//
// names the preludes it uses: prelude_release_latch.lua, ..., joined in
// that order before the script, so that their local functions are defined
// where the script calls them. The script's source, loaded and hashed, is
// the joined text, so that it can never be loaded without its preludes.
// Load fails when a file is missing.
func Load(fsys fs.FS, name string) (*Script, error) {
	body, err := readLua(fsys, name)
	if err != nil {
		return nil, err
	}
	var src strings.Builder
	for _, p := range preludesOf(body) {
		text, err := readLua(fsys, "prelude_"+p)
		if err != nil {
			return nil, err
		}
		src.WriteString(text)
	}
	src.WriteString(body)
	return New(name, src.String()), nil
}

// readLua returns the text of <name>.lua, ending in a newline.
func readLua(fsys fs.FS, name string) (string, error) {
	b, err := fs.ReadFile(fsys, name+".lua")
	if err != nil {
		return "", fmt.Errorf("missing embedded script %s", name)
	}
	s := string(b)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s, nil
}

// preludesOf returns the prelude names of a script's header lines
// "-- prelude: a, b".
func preludesOf(body string) []string {
	var names []string
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "--") {
			break // the header ends at the first line of code
		}
		list, ok := strings.CutPrefix(line, "-- prelude:")
		if !ok {
			continue
		}
		for _, n := range strings.Split(list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

// Name returns the script's name (its file's, without .lua).
func (s *Script) Name() string { return s.name }

// SHA returns the SHA1 of the script's source, as EVALSHA names it.
func (s *Script) SHA() string { return s.sha }

// Source returns the script's source, preludes included: what SCRIPT LOAD
// sends.
func (s *Script) Source() string { return s.src }

// Argv returns a new EVALSHA command line of s, "evalsha", its SHA, the key
// count and keys (the call's KEYS, boxed once by the caller), with room for
// n arguments: the caller appends them and passes the whole line to
// Runner.RunArgv. It is the line go-redis's EvalSha builds, with nothing
// boxed again.
func (s *Script) Argv(keys []any, n int) []any {
	a := make([]any, 3+len(keys), 3+len(keys)+n)
	a[0], a[1], a[2] = evalShaArg, s.shaArg, len(keys)
	copy(a[3:], keys)
	return a
}

var evalShaArg any = "evalsha"

// plainArg reports whether go-redis sends a lone argument as it is (its
// EvalSha flattens a slice, a map or a struct into several).
func plainArg(a any) bool {
	switch a.(type) {
	case string, []byte, int, int64, uint64, int32, uint32, float64, bool:
		return true
	}
	return false
}
