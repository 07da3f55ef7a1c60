package gitpub

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Diff shows what laying files on a commit would change, as git's unified diff,
// without a commit, a branch or a push; equal files make no diff, and a long diff is
// cut at a line end under the bound.
func TestDiff(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, log := newPublisher(t, r)
	ctx := context.Background()
	before := refs(t, p.Dir)
	files := map[string][]byte{"src/lib.rs": []byte("pub fn gate() -> bool { true }\n"), "README.md": []byte("# mlxcel\n")}
	got, err := p.Diff(ctx, r.base, files, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"diff --git a/src/lib.rs b/src/lib.rs", "-pub fn gate() -> bool { false }", "+pub fn gate() -> bool { true }"} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "README.md") {
		t.Errorf("an unchanged file is in the diff:\n%s", got)
	}
	if after := refs(t, p.Dir); after != before {
		t.Errorf("Diff moved refs:\n%s\n->\n%s", before, after)
	}
	for _, sub := range log.subcommands() {
		if sub == "push" || sub == "commit-tree" || sub == "update-ref" {
			t.Errorf("Diff ran git %s", sub)
		}
	}
	if got, err := p.Diff(ctx, r.base, map[string][]byte{"README.md": []byte("# mlxcel\n")}, 1<<20); err != nil || got != "" {
		t.Errorf("equal files: %q, %v; want no diff", got, err)
	}
	long := strings.Repeat("line of the new gate\n", 200)
	got, err = p.Diff(ctx, r.base, map[string][]byte{"src/lib.rs": []byte(long)}, 512)
	if !errors.Is(err, ErrDiffTooLong) || len(got) > 512 || (got != "" && !strings.HasSuffix(got, "\n")) {
		t.Errorf("a long diff: %d bytes, %v; want at most 512 ending a line and ErrDiffTooLong", len(got), err)
	}
	for _, bad := range []struct {
		commit string
		files  map[string][]byte
	}{{"abc", files}, {r.base, map[string][]byte{"../x": nil}}} {
		if _, err := p.Diff(ctx, bad.commit, bad.files, 100); err == nil {
			t.Errorf("Diff(%q, %v) did not fail", bad.commit, bad.files)
		}
	}
}
