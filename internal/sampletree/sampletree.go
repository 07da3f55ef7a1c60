// Package sampletree is the one sample mlxcel checkout perfbot's tests and demo use: the
// grouped_gemm numeric tests and the kernel port checker as the patcher knows them, the
// dispatch sources the checker scans, the ROCm overlay's UPSTREAM file, a workspace
// Cargo.toml and a .github/perfbot.yml with four model families. It is embedded, so a
// test anywhere (and a binary) can lay it out in a folder of its own; a test that needs
// a variation writes the sample first and its own files over it.
package sampletree

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

//go:embed all:mlxcel
var files embed.FS

// root is the embedded folder holding the checkout.
const root = "mlxcel"

// gitignore is the name the checkout's .gitignore is kept under, without its dot, so
// that it does not apply to perfbot's own tree.
const gitignore = "gitignore"

// FS is the checkout as stored, rooted at its top folder (.gitignore kept as gitignore).
func FS() fs.FS {
	sub, err := fs.Sub(files, root)
	if err != nil {
		panic(err) // root is a constant folder of the embedded tree
	}
	return sub
}

// ReadFile returns the file at the slash-separated path rel of the checkout.
func ReadFile(rel string) ([]byte, error) {
	if rel == ".gitignore" {
		rel = gitignore
	}
	return fs.ReadFile(FS(), rel)
}

// Write writes the whole checkout under dir (created when missing), .gitignore under its
// own name. Files dir already has at the same paths are overwritten, others are kept.
func Write(dir string) error {
	return write(dir, func(string) bool { return true })
}

// WriteSources writes only the checkout's Rust and Python sources under dir: the files
// the patcher reads and edits and the ones its checker scans, without the workspace
// Cargo.toml, .github, .gitignore and the overlay's UPSTREAM.
func WriteSources(dir string) error {
	return write(dir, isSource)
}

func isSource(rel string) bool {
	ext := path.Ext(rel)
	return ext == ".rs" || ext == ".py"
}

func write(dir string, keep func(rel string) bool) error {
	err := fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !keep(p) {
			return err
		}
		data, err := fs.ReadFile(FS(), p)
		if err != nil {
			return err
		}
		rel := p
		if rel == gitignore {
			rel = ".gitignore"
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("writing the sample mlxcel checkout: %w", err)
	}
	return nil
}
