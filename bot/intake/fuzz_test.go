package intake

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/results"
)

// FuzzProfileFile puts one file of any name and content in a results folder. Whatever
// it is, the copy is either refused with an *Error naming the file and nothing left at
// the destination, or the file is copied byte for byte (or dropped as a trace) under a
// name of the layout.
func FuzzProfileFile(f *testing.F) {
	fix := testfix.Path(f, "mlxcel-gfx1151", "rocm_profiles", realFolder)
	for _, name := range []string{llamaRun + "_summary.json", llamaRun + "_kernel_stats.csv", qwenRun + "_decode_kernels.csv", qwenRun + "_bench.log", results.GuardLogFile} {
		b, err := os.ReadFile(filepath.Join(fix, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(name, b)
	}
	f.Add(results.SessionFile, []byte(`{"commit": "929c80ab", "runs": []}`))
	f.Add(results.GemmTestsFile, []byte(`{"overlay_commit": "75915908", "tests": []}`))
	f.Add(GemmPatchFile, []byte(`{}`))
	f.Add(results.HostInfoFile, []byte(`{"rocm": {"value": "10.0.0"}}`))
	f.Add(results.GuardLogFile+".jsonl", []byte("{\"attempt\": 1}\n"))
	f.Add(llamaRun+"_kernel_trace.csv", []byte("\"Kind\"\n"))
	f.Add("x\x1b]0;pwned\a_bench.log", []byte("hi"))
	f.Add("notes.txt", []byte("hi"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		dir := filepath.Join(t.TempDir(), realFolder)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > maxNameBytes {
			return // not a name a file system holds
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return
		}
		dst := filepath.Join(t.TempDir(), "copy")
		lim := DefaultLimits()
		lim.MaxFileBytes = 1 << 20
		res, err := ProfileResult(context.Background(), dir, dst, lim)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("not an *Error: %v", err)
			}
			if e.File != realFolder+"/"+name {
				t.Errorf("the error names %q, want %q", e.File, realFolder+"/"+name)
			}
			if strings.ContainsAny(err.Error(), "\x00\x1b\a\r\n") {
				t.Errorf("the message carries raw control characters: %q", err)
			}
			if _, serr := os.Lstat(dst); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("the destination is left after %v", err)
			}
			return
		}
		if checkName(name) != nil {
			t.Fatalf("accepted the name %q", name)
		}
		if k, drop, err := profileKind(name); err != nil || (k == nil) != drop {
			t.Fatalf("accepted %q, which the layout does not have", name)
		}
		got, rerr := os.ReadFile(filepath.Join(res.Dir, name))
		switch {
		case len(res.Dropped) == 1 && res.Dropped[0] == name:
			if rerr == nil {
				t.Errorf("%q is dropped and copied", name)
			}
		case len(res.Files) == 1 && res.Files[0] == name:
			if rerr != nil || !bytes.Equal(got, data) {
				t.Errorf("%q is not copied byte for byte: %v", name, rerr)
			}
		default:
			t.Errorf("Files %q, Dropped %q for the one file %q", res.Files, res.Dropped, name)
		}
	})
}
