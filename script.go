package redisson

import (
	"embed"
	"io/fs"

	"github.com/goredisson/redisson/internal/scripting"
	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// script is one embedded Lua script with its SHA1, computed once: the
// script runner's (internal/scripting), which joins its preludes.
type script = scripting.Script

// luaDir is lua/ of the embedded files (fs.Sub fails only on an invalid
// path).
var luaDir, _ = fs.Sub(luaFiles, "lua")

// mustScript returns the script lua/<name>.lua, the preludes its header
// names (a line "-- prelude: release_latch, ..." for
// lua/prelude_release_latch.lua, ...) joined before it; its SHA is of the
// joined text (see scripting.Load). A missing file is a build defect:
// mustScript panics.
func mustScript(name string) *script {
	s, err := scripting.Load(luaDir, name)
	if err != nil {
		panic("redisson: " + err.Error()) // a build defect, not a runtime condition
	}
	allScripts = append(allScripts, s)
	return s
}

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
