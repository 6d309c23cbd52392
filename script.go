package redisson

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// script is one embedded Lua script with its SHA1, computed once.
type script struct {
	name string
	src  string // the preludes the script names, then the script
	sha  string // of src
	// shaArg is sha boxed once, for the commands built by argv.
	shaArg any
}

// mustScript returns the script lua/<name>.lua. A line of its header (the
// comment lines it opens with) of the form
//
//	-- prelude: release_latch, ...
//
// names the preludes it uses: lua/prelude_release_latch.lua, ..., joined in
// that order before the script, so that their local functions are defined
// where the script calls them. The script's source, loaded and hashed, is
// the joined text. A missing file is a build defect: mustScript panics.
func mustScript(name string) *script {
	body := mustLua(name)
	var src strings.Builder
	for _, p := range preludesOf(body) {
		src.WriteString(mustLua("prelude_" + p))
	}
	src.WriteString(body)
	sum := sha1.Sum([]byte(src.String()))
	sha := hex.EncodeToString(sum[:])
	return &script{name: name, src: src.String(), sha: sha, shaArg: sha}
}

// mustLua returns the text of lua/<name>.lua, ending in a newline.
func mustLua(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("redisson: missing embedded script " + name) // a build defect, not a runtime condition
	}
	s := string(b)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
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

// argv returns a new EVALSHA command line of s, "evalsha", its SHA, the key
// count and keys (the call's KEYS, boxed once by the caller), with room for
// n arguments: the caller appends them and passes the whole line to
// runArgv. It is the line go-redis's EvalSha builds, with nothing boxed
// again.
func (s *script) argv(keys []any, n int) []any {
	a := make([]any, 3+len(keys), 3+len(keys)+n)
	a[0], a[1], a[2] = evalShaArg, s.shaArg, len(keys)
	copy(a[3:], keys)
	return a
}

var evalShaArg any = "evalsha"

// int64s is cmd.Int64Slice appending to dst: a reply of integers is read
// without a slice of its own when dst has room. Any other reply is left to
// Int64Slice, for its result and errors.
func int64s(cmd *redis.Cmd, dst []int64) ([]int64, error) {
	if cmd.Err() == nil {
		if vals, ok := cmd.Val().([]any); ok {
			out := dst
			for _, v := range vals {
				n, ok := v.(int64)
				if !ok {
					return cmd.Int64Slice()
				}
				out = append(out, n)
			}
			return out, nil
		}
	}
	return cmd.Int64Slice()
}

// plainArg reports whether go-redis sends a lone argument as it is (its
// EvalSha flattens a slice, a map or a struct into several).
func plainArg(a any) bool {
	switch a.(type) {
	case string, []byte, int, int64, uint64, int32, uint32, float64, bool:
		return true
	}
	return false
}
