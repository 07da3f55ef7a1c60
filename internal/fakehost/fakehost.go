// Package fakehost carries the simulated gfx1151 host that the tests and `perfbot demo`
// run perfbot on: a fake root (the ROCm 10 layout, a 96 GiB unified-memory GPU in sysfs,
// /proc files) and fake tools that print the real tools' formats (rocminfo, hipconfig,
// rocprofv3, mlxcel-bench-decode, cargo). host/README.md describes them.
//
// The files are embedded so the demo works from the binary alone. Extract writes them
// out; nothing here runs them. It must never be used on a real host's paths.
package fakehost

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

//go:embed all:host
var files embed.FS

// Host is an extracted fake host.
type Host struct {
	Root     string // the host's "/"
	Bin      string // the fake tools, to put first on PATH
	Rocminfo string // a real `rocminfo --support` output of a gfx1151 (FAKEHOST_ROCMINFO)
}

// Env returns the environment additions the fake tools read.
func (h Host) Env() []string {
	return []string{"FAKEHOST_ROCMINFO=" + h.Rocminfo}
}

// Extract writes the fake host into dir (which must exist and be empty of its names)
// and returns where its parts are. The tools are made executable.
func Extract(dir string) (Host, error) {
	err := fs.WalkDir(files, "host", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "host"), "/")
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if path.Dir(rel) == "bin" {
			mode = 0o755
		}
		return os.WriteFile(dst, data, mode)
	})
	if err != nil {
		return Host{}, fmt.Errorf("writing the fake host into %s: %w", dir, err)
	}
	return Host{Root: filepath.Join(dir, "root"), Bin: filepath.Join(dir, "bin"), Rocminfo: filepath.Join(dir, "rocminfo-gfx1151.txt")}, nil
}
