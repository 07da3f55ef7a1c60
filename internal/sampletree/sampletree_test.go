package sampletree

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// listFiles lists the regular files under dir as slash paths.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestWriteLaysOutTheWholeCheckout: every stored file is written byte for byte, the
// .gitignore under its own name, and a file dir already holds elsewhere stays.
func TestWriteLaysOutTheWholeCheckout(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	want := []string{
		".github/perfbot.yml", ".github/workflows/perfbot-profile.yml", ".gitignore", "Cargo.toml", "README.md",
		"examples/decode_bench.rs", "scripts/ci/check_kernel_port_dispatch.py",
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM", "src/lib/mlxcel-core/src/attention/sdpa_dispatch.rs",
		"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs", "src/lib/mlxcel-core/src/lib.rs",
		"src/lib/mlxcel-models/src/moe/router.rs",
	}
	got := listFiles(t, dir)
	if !slices.Equal(got, want) {
		t.Fatalf("written files\n %q\nwant\n %q", got, want)
	}
	for _, rel := range got {
		if rel == "README.md" {
			continue
		}
		stored, err := ReadFile(rel)
		if err != nil {
			t.Fatal(err)
		}
		onDisk, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stored, onDisk) || len(stored) == 0 {
			t.Errorf("%s: %d bytes written, %d stored", rel, len(onDisk), len(stored))
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "# mine\n" {
		t.Errorf("a file of dir's own became %q", b)
	}
}

// TestWriteSourcesOnlyTheSources: only the Rust and Python files are written.
func TestWriteSourcesOnlyTheSources(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSources(dir); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"examples/decode_bench.rs", "scripts/ci/check_kernel_port_dispatch.py",
		"src/lib/mlxcel-core/src/attention/sdpa_dispatch.rs",
		"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs", "src/lib/mlxcel-core/src/lib.rs",
		"src/lib/mlxcel-models/src/moe/router.rs",
	}
	if got := listFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("written files\n %q\nwant\n %q", got, want)
	}
}

// TestWriteNamesTheFailure: a folder that cannot be made is an error, not a partial
// tree reported as done.
func TestWriteNamesTheFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(file); err == nil {
		t.Error("Write into a regular file: no error")
	}
	if err := WriteSources(file); err == nil {
		t.Error("WriteSources into a regular file: no error")
	}
}
