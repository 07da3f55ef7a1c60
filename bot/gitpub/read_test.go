package gitpub

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/gittest"
)

// A commit of the remote with every kind of tree entry: a regular file, an executable,
// a symbolic link to a file and one to a folder, a submodule and a large file.
func blobCommit(t *testing.T, r *remote) string {
	t.Helper()
	writeFile(t, filepath.Join(r.seed, ".github", "perfbot.yml"), "epic: 1814\n")
	writeFile(t, filepath.Join(r.seed, "big.txt"), strings.Repeat("x", 5000))
	if err := os.Symlink("perfbot.yml", filepath.Join(r.seed, ".github", "rules.yml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/old", filepath.Join(r.seed, "linkdir")); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, r.seed, "add", "-A")
	gittest.Git(t, r.seed, "update-index", "--add", "--cacheinfo", "160000,"+r.base+",vendor/sub")
	gittest.Git(t, r.seed, "commit", "--quiet", "-m", "blobs")
	sha := gittest.Git(t, r.seed, "rev-parse", "HEAD")
	// On a branch of its own: the clone does not have it until Fetch.
	gittest.Git(t, r.seed, "push", "--quiet", "hub", "HEAD:refs/heads/pinned")
	return sha
}

func TestReadBlob(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	gittest.Git(t, r.dir, "config", "uploadpack.allowFilter", "true")
	p, err := Clone(context.Background(), r.url, filepath.Join(t.TempDir(), "pub.git"), CloneOptions{Filter: "blob:none"})
	if err != nil {
		t.Fatal(err)
	}
	sha := blobCommit(t, r)
	ctx := context.Background()
	// The clone was made before the commit existed: Fetch brings it, blobs left out.
	if err := p.Fetch(ctx, sha); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if missing := gittest.Git(t, p.Dir, "rev-list", "--objects", "--missing=print", sha); !strings.Contains(missing, "?") {
		t.Fatalf("the partial clone has every blob: the test proves nothing:\n%s", missing)
	}
	got, err := p.ReadBlob(ctx, sha, ".github/perfbot.yml", 1<<20)
	if err != nil || string(got) != "epic: 1814\n" {
		t.Fatalf("ReadBlob = %q, %v", got, err)
	}
	if got, err := p.ReadBlob(ctx, sha, "scripts/bench.sh", 1<<20); err != nil || !strings.HasPrefix(string(got), "#!/bin/sh") {
		t.Errorf("an executable: %q, %v", got, err)
	}
	if got, err := p.ReadBlob(ctx, sha, "big.txt", 5000); err != nil || len(got) != 5000 {
		t.Errorf("a file of exactly the bound: %d bytes, %v", len(got), err)
	}
	refused := map[string]string{
		".github/rules.yml":  "symbolic link",
		"linkdir/notes.md":   "no such file",
		"vendor/sub":         "submodule",
		"docs/old":           "folder",
		"big.txt":            "more than",
		"missing.yml":        "no such file",
		"../outside.yml":     "leaves the repository",
		".git/config":        "inside .git",
		"docs//old/notes.md": "not clean",
	}
	for path, want := range refused {
		max := int64(1 << 20)
		if path == "big.txt" {
			max = 4999
		}
		_, err := p.ReadBlob(ctx, sha, path, max)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
	if _, err := p.ReadBlob(ctx, sha, "missing.yml", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file is not fs.ErrNotExist: %v", err)
	}
	var be *BlobError
	if _, err := p.ReadBlob(ctx, sha, ".github/rules.yml", 10); !errors.As(err, &be) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a link: %v", err)
	}
	if _, err := p.ReadBlob(ctx, "HEAD", "README.md", 10); err == nil {
		t.Error("a symbolic revision was read: only a pinned SHA is")
	}
	if err := p.Fetch(ctx, strings.Repeat("ab", 20)); err == nil || !strings.Contains(err.Error(), "not on the remote") {
		t.Errorf("Fetch of a commit the remote lacks: %v", err)
	}
}

// A clone without the named remote still reads the commits it has.
func TestReadBlobWithoutRemote(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	dir := filepath.Join(t.TempDir(), "clone")
	gittest.Git(t, filepath.Dir(dir), "clone", "--quiet", r.dir, dir)
	gittest.Git(t, dir, "remote", "remove", "origin")
	p := &Publisher{Dir: dir, Remote: "origin"}
	if b, err := p.ReadBlob(context.Background(), r.base, "README.md", 100); err != nil || string(b) != "# mlxcel\n" {
		t.Errorf("ReadBlob = %q, %v", b, err)
	}
	if _, err := p.ReadBlob(context.Background(), strings.Repeat("ab", 20), "README.md", 100); err == nil || !strings.Contains(err.Error(), "no remote named") {
		t.Errorf("a commit it lacks, with no remote to fetch it from: %v", err)
	}
}
