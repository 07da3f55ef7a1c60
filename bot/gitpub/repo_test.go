package gitpub

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/gittest"
)

func TestPublishFetchesMissingBase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// protocol 0 servers refuse a want of a SHA that is no branch tip, which makes
		// Publish fall back to fetching the branches.
		protocol string
		tip      bool
		fetches  int
	}{
		{"by SHA", "2", true, 1},
		{"by branches when the server refuses SHAs", "0", false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRemote(t)
			p, log := newPublisher(t, r)
			gittest.Git(t, p.Dir, "config", "protocol.version", tc.protocol)
			// The base appears on the remote after the clone was made, on another branch.
			gittest.Git(t, r.seed, "checkout", "--quiet", "-b", "feature")
			writeFile(t, filepath.Join(r.seed, "src/lib.rs"), "pub fn gate() -> bool { true }\n")
			gittest.Git(t, r.seed, "commit", "--quiet", "-am", "enable the gate")
			base := gittest.Git(t, r.seed, "rev-parse", "HEAD")
			if !tc.tip {
				gittest.Git(t, r.seed, "commit", "--quiet", "--allow-empty", "-m", "later")
			}
			gittest.Git(t, r.seed, "push", "--quiet", "hub", "feature")
			if _, err := gittest.Run(gittest.Command(p.Dir, "cat-file", "-e", base)); err == nil {
				t.Fatal("the base is already in the clone: the test proves nothing")
			}

			log.reset()
			res, err := p.Publish(context.Background(), resultsChange(t, base))
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if got := gittest.Git(t, r.dir, "rev-parse", res.Commit+"^"); got != base {
				t.Fatalf("parent = %s, want the fetched base %s", got, base)
			}
			var fetches int
			for _, s := range log.subcommands() {
				if s == "fetch" {
					fetches++
				}
			}
			if fetches != tc.fetches {
				t.Fatalf("fetches = %d, want %d:\n%s", fetches, tc.fetches, log.joined())
			}
		})
	}
}

func TestPublishBaseNotOnRemote(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	before := refs(t, r.dir)
	_, err := p.Publish(context.Background(), resultsChange(t, strings.Repeat("ab", 20)))
	if err == nil || !strings.Contains(err.Error(), "is not on the remote") || errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v, want a failure saying the base is not on the remote", err)
	}
	if refs(t, r.dir) != before {
		t.Fatal("the remote changed")
	}
}

func TestPublishRunsNoLocalHooks(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	script := "#!/bin/sh\necho \"$0\" >> " + marker + "\nexit 1\n"
	custom := filepath.Join(t.TempDir(), "hooks")
	for _, dir := range []string{filepath.Join(p.Dir, "hooks"), custom} {
		for _, h := range []string{"pre-push", "reference-transaction", "pre-commit", "post-commit", "commit-msg", "pre-auto-gc", "post-index-change"} {
			writeFile(t, filepath.Join(dir, h), script)
			if err := os.Chmod(filepath.Join(dir, h), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	gittest.Git(t, p.Dir, "config", "core.hooksPath", custom)
	// The hooks are live for git itself: without Publish's setting they would run.
	if _, err := gittest.Run(gittest.Command(p.Dir, "update-ref", "refs/probe", r.base)); err == nil {
		t.Fatal("the reference-transaction hook did not stop a plain update-ref: the test proves nothing")
	}
	os.Remove(marker)

	res, err := p.Publish(context.Background(), resultsChange(t, r.base))
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if res.Action != ActionCreated {
		t.Fatalf("action = %s", res.Action)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("hooks ran:\n%s", b)
	}
}

func TestPublishRejectedByRemoteKeepsCommit(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	hook := filepath.Join(r.dir, "hooks", "pre-receive")
	writeFile(t, hook, "#!/bin/sh\necho 'branch is frozen by policy' >&2\nexit 1\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	c := resultsChange(t, r.base)

	res, err := p.Publish(context.Background(), c)
	var pe *PushError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a PushError", err)
	}
	for _, want := range []string{"branch is frozen by policy", res.Commit, "kept at " + res.LocalRef} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if res.Retries != 0 || res.Pushed || r.ref(t, "refs/heads/"+botBranch) != "" {
		t.Fatalf("result = %+v: a rejection that would repeat must not be retried or land", res)
	}
	if got := gittest.Git(t, p.Dir, "rev-parse", res.LocalRef); got != res.Commit {
		t.Fatalf("local ref = %s, want %s", got, res.Commit)
	}

	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	again, err := p.Publish(context.Background(), c)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if again.Commit != res.Commit || again.Action != ActionCreated {
		t.Fatalf("rerun = %+v, want the kept commit %s created", again, res.Commit)
	}
}

func TestPublishPatchesRemovesAndKeepsModes(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	c := resultsChange(t, r.base)
	c.Files = map[string][]byte{
		"scripts/bench.sh": []byte("#!/bin/sh\necho patched\n"),
		"src/lib.rs":       []byte("pub fn gate() -> bool { true }\n"),
	}
	c.Remove = []string{"docs/old", "not/there.md"}

	res, err := p.Publish(context.Background(), c)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	got := strings.Split(gittest.Git(t, r.dir, "diff-tree", "-r", "--no-commit-id", "--name-status", r.base, res.Commit), "\n")
	want := []string{"D\tdocs/old/more/deep.md", "D\tdocs/old/notes.md", "M\tscripts/bench.sh", "M\tsrc/lib.rs"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("changes against the base (-want +got):\n%s", diff)
	}
	modes := treeFiles(t, r.dir, res.Commit)
	if modes["scripts/bench.sh"] != "100755" || modes["src/lib.rs"] != "100644" {
		t.Fatalf("modes = %v, want the script still executable", modes)
	}
}

func TestPublishSameAsBase(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	before := refs(t, r.dir)
	c := resultsChange(t, r.base)
	c.Files = map[string][]byte{"README.md": []byte("# mlxcel\n")}
	_, err := p.Publish(context.Background(), c)
	if !errors.Is(err, ErrNoChange) {
		t.Fatalf("err = %v, want ErrNoChange", err)
	}
	if refs(t, r.dir) != before {
		t.Fatal("the remote changed")
	}
}

func TestPublishLeavesCheckoutAlone(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	work := filepath.Join(t.TempDir(), "work")
	gittest.Git(t, filepath.Dir(work), "clone", "--quiet", r.url, work)
	writeFile(t, filepath.Join(work, "README.md"), "# local edit\n")
	writeFile(t, filepath.Join(work, "staged.txt"), "staged\n")
	gittest.Git(t, work, "add", "staged.txt")
	snapshot := func() string {
		index, err := os.ReadFile(filepath.Join(work, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		readme, err := os.ReadFile(filepath.Join(work, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join([]string{
			gittest.Git(t, work, "--no-optional-locks", "status", "--porcelain=v1"),
			gittest.Git(t, work, "rev-parse", "HEAD"),
			// Remote-tracking refs may follow the push, as with any push; branches may not.
			gittest.Git(t, work, "for-each-ref", "refs/heads"),
			fmt.Sprintf("index sha256 %x", sha256.Sum256(index)),
			string(readme),
		}, "\n")
	}
	before := snapshot()

	// DefaultBranch is left empty: Publish asks the remote.
	p := &Publisher{Dir: work, Branches: []string{botBranch}}
	c := resultsChange(t, r.base)
	c.Files["README.md"] = []byte("# published\n")
	res, err := p.Publish(context.Background(), c)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if res.Action != ActionCreated {
		t.Fatalf("action = %s", res.Action)
	}
	if after := snapshot(); after != before {
		t.Fatalf("the checkout changed:\n%s\nwant\n%s", after, before)
	}

	// The remote may also be given by URL.
	byURL := &Publisher{Dir: work, Remote: r.url, DefaultBranch: "main", Branches: []string{botBranch}}
	again, err := byURL.Publish(context.Background(), c)
	if err != nil || again.Action != ActionUnchanged || again.Commit != res.Commit {
		t.Fatalf("publish by URL = %+v, %v; want unchanged %s", again, err, res.Commit)
	}
}

func TestPublishAsksRemoteForDefaultBranch(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	gittest.Git(t, r.dir, "branch", "trunk", "main")
	gittest.Git(t, r.dir, "symbolic-ref", "HEAD", "refs/heads/trunk")
	p, _ := newPublisher(t, r)
	if p.DefaultBranch != "trunk" {
		t.Fatalf("Clone took default branch %q, want trunk", p.DefaultBranch)
	}
	p.DefaultBranch = ""
	p.Branches = append(p.Branches, "trunk")
	c := resultsChange(t, r.base)
	c.Branch = "trunk"
	_, err := p.Publish(context.Background(), c)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `"trunk" is the repository's default branch`) {
		t.Fatalf("err = %v, want the remote's default branch refused", err)
	}
	if got := r.ref(t, "refs/heads/trunk"); got != r.base {
		t.Fatalf("trunk moved to %s", got)
	}
}

func TestPublishFromPartialClone(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	gittest.Git(t, r.dir, "config", "uploadpack.allowFilter", "true")
	p, err := Clone(context.Background(), r.url, filepath.Join(t.TempDir(), "pub.git"),
		CloneOptions{Branches: []string{botBranch}, Filter: "blob:none"})
	if err != nil {
		t.Fatalf("Clone: %v", err)
	}
	if missing := gittest.Git(t, p.Dir, "rev-list", "--objects", "--missing=print", r.base); !strings.Contains(missing, "?") {
		t.Fatalf("the partial clone has every blob: the test proves nothing:\n%s", missing)
	}
	c := resultsChange(t, r.base)
	res, err := p.Publish(context.Background(), c)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	files := treeFiles(t, r.dir, res.Commit)
	if len(files) != len(treeFiles(t, r.dir, r.base))+len(c.Files) {
		t.Fatalf("published tree has %d files, want the base's plus %d", len(files), len(c.Files))
	}
	if err := gittest.Command(r.dir, "fsck", "--no-progress", "--strict").Run(); err != nil {
		t.Fatalf("the remote is not consistent after the push: %v", err)
	}
}

func TestPublishHonoursCancel(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Publish(ctx, resultsChange(t, r.base))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if r.ref(t, "refs/heads/"+botBranch) != "" {
		t.Fatal("a cancelled publication pushed")
	}
}
