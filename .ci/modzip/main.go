// Command modzip publishes one module of this tree into a module proxy kept
// in a directory (GOPROXY=file://DIR), the way a tag on the hosting
// repository publishes it to the real proxy:
//
//	modzip -proxy DIR -version v0.1.0 SRC
//
// writes DIR/<escaped module path>/@v/<version>.mod, .zip and .info and adds
// the version to @v/list. The module path is SRC/go.mod's. The zip is made by
// golang.org/x/mod/zip, the code the go command itself uses, so it holds what
// the published module will hold: SRC's files under module@version/, less
// nested modules, vendor directories and version-control metadata, and it
// fails on what the go command would refuse (a file name not allowed, two
// names differing only in case, a module over the size limits).
//
// It is its own module (.ci/modzip/go.mod) so that golang.org/x/mod is no
// dependency of the library or of any published module; .ci/install-check
// runs it.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func main() {
	proxy := flag.String("proxy", "", "the proxy `directory`")
	version := flag.String("version", "", "the `version` to publish (a semantic version, v0.1.0)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: modzip -proxy DIR -version VERSION SRC")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *proxy == "" || *version == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := publish(*proxy, *version, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "modzip:", err)
		os.Exit(1)
	}
}

func publish(proxy, version, src string) error {
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return fmt.Errorf("%s/go.mod names no module", src)
	}
	if semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not a canonical semantic version", version)
	}
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	dir := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromDir(&zip, mv, src); err != nil {
		return fmt.Errorf("zip of %s: %w", mv, err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    string
	}{version, time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	for ext, data := range map[string][]byte{".mod": gomod, ".zip": zip.Bytes(), ".info": info} {
		if err := os.WriteFile(filepath.Join(dir, version+ext), data, 0o644); err != nil {
			return err
		}
	}
	return addToList(filepath.Join(dir, "list"), version)
}

// addToList adds version to the proxy's list file of the module, once.
func addToList(list, version string) error {
	old, err := os.ReadFile(list)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := strings.Fields(string(old))
	if slices.Contains(versions, version) {
		return nil
	}
	versions = append(versions, version)
	semver.Sort(versions)
	return os.WriteFile(list, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}
