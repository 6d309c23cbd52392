package scripting

import (
	"crypto/sha1"
	"encoding/hex"
	"testing"
	"testing/fstest"
)

// Load joins the preludes a header names, in its order and each ending in a
// newline, before the script; the SHA is of the joined text.
func TestLoadJoinsPreludes(t *testing.T) {
	fsys := fstest.MapFS{
		"s.lua":         {Data: []byte("-- KEYS[1]: k\n-- prelude: a, b\nreturn f() + g()")},
		"prelude_a.lua": {Data: []byte("local function f() return 1 end")},
		"prelude_b.lua": {Data: []byte("-- prelude b\nlocal function g() return 2 end\n")},
	}
	s, err := Load(fsys, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := "local function f() return 1 end\n-- prelude b\nlocal function g() return 2 end\n-- KEYS[1]: k\n-- prelude: a, b\nreturn f() + g()\n"
	if s.Source() != want {
		t.Errorf("source %q, want %q", s.Source(), want)
	}
	sum := sha1.Sum([]byte(want))
	if s.SHA() != hex.EncodeToString(sum[:]) || s.Name() != "s" {
		t.Errorf("script %s %s, want s and the SHA of its joined source", s.Name(), s.SHA())
	}
}

// A prelude line after the header's end is code, not a header line; a
// missing script or prelude is an error.
func TestLoadHeaderAndMissingFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"plain.lua":   {Data: []byte("-- KEYS: none\nreturn 1\n-- prelude: nope\n")},
		"missing.lua": {Data: []byte("-- prelude: gone\nreturn 1\n")},
	}
	s, err := Load(fsys, "plain")
	if err != nil || s.Source() != "-- KEYS: none\nreturn 1\n-- prelude: nope\n" {
		t.Errorf("Load(plain) = %v, %v; want the file as it is", s, err)
	}
	if _, err := Load(fsys, "missing"); err == nil {
		t.Error("Load of a script whose prelude is missing: no error")
	}
	if _, err := Load(fsys, "absent"); err == nil {
		t.Error("Load of a missing script: no error")
	}
}

// Argv builds go-redis's EVALSHA line: the command, the SHA, the key count
// and the keys, with room for the arguments.
func TestArgv(t *testing.T) {
	s := New("x", "return 1")
	a := s.Argv([]any{"k1", "k2"}, 3)
	if len(a) != 5 || cap(a) != 8 || a[0] != "evalsha" || a[1] != s.SHA() || a[2] != 2 || a[3] != "k1" || a[4] != "k2" {
		t.Errorf("Argv = %v (cap %d); want [evalsha <sha> 2 k1 k2], room for 3", a, cap(a))
	}
}
