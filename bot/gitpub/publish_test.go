package gitpub

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/internal/testfix"
)

func TestPublishCreatesBranchOnBase(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	c := resultsChange(t, r.base)

	res, err := p.Publish(context.Background(), c)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if res.Action != ActionCreated || !res.Pushed || res.Retries != 0 || res.Previous != "" {
		t.Fatalf("result = %+v, want created, pushed, no retries, no previous", res)
	}
	if got := r.ref(t, "refs/heads/"+botBranch); got != res.Commit {
		t.Fatalf("remote branch = %q, want the published commit %s", got, res.Commit)
	}
	if got := gittest.Git(t, r.dir, "rev-list", "--parents", "-n1", res.Commit); got != res.Commit+" "+r.base {
		t.Fatalf("commit and parents = %q, want exactly one parent, the base %s", got, r.base)
	}

	// Exactly the given files were added; the base's files are all still there.
	added := strings.Fields(gittest.Git(t, r.dir, "diff-tree", "-r", "--no-commit-id", "--name-status", r.base, res.Commit))
	var want []string
	for _, k := range sortedKeys(c.Files) {
		want = append(want, "A", k)
	}
	if diff := cmp.Diff(want, added); diff != "" {
		t.Fatalf("files changed against the base (-want +got):\n%s", diff)
	}
	// Byte for byte: the decode_kernels CSVs have CRLF line ends that must survive.
	for path, body := range c.Files {
		if raw := catBlob(t, r.dir, res.Commit+":"+path); !bytes.Equal(raw, body) {
			t.Errorf("%s: bytes differ (len %d, want %d)", path, len(raw), len(body))
		}
	}
	if !bytes.Contains(c.Files[resultsIn+"Qwen3-30B-A3B-4bit_greedy_decode_kernels.csv"], []byte("\r\n")) {
		t.Fatal("fixture lost its CRLF line ends: the byte-for-byte check above proves nothing")
	}

	meta := gittest.Git(t, r.dir, "show", "-s", "--format=%an <%ae>|%cn <%ce>|%ad|%cd|%B", "--date=raw", res.Commit)
	wantMeta := "perfbot[bot] <perfbot[bot]@users.noreply.github.com>|perfbot[bot] <perfbot[bot]@users.noreply.github.com>|1790795045 +0200|1790795045 +0200|" + c.Message
	if meta != wantMeta {
		t.Fatalf("commit metadata:\n got %q\nwant %q", meta, wantMeta)
	}
	if res.Tree != gittest.Git(t, r.dir, "rev-parse", res.Commit+"^{tree}") {
		t.Fatalf("Result.Tree %s is not the commit's tree", res.Tree)
	}
	if got := gittest.Git(t, p.Dir, "rev-parse", res.LocalRef); got != res.Commit {
		t.Fatalf("local ref %s = %s, want %s", res.LocalRef, got, res.Commit)
	}
}

func catBlob(t testing.TB, dir, spec string) []byte {
	t.Helper()
	var out bytes.Buffer
	cmd := gittest.Command(dir, "cat-file", "blob", spec)
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("cat-file %s: %v", spec, err)
	}
	return out.Bytes()
}

func TestPublishSameChangeIsUnchanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		later time.Duration // the rerun's date, relative to the first publication
	}{
		{"same inputs", 0},
		{"same files, later run", 3 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRemote(t)
			p, log := newPublisher(t, r)
			c := resultsChange(t, r.base)
			first, err := p.Publish(context.Background(), c)
			if err != nil {
				t.Fatalf("first Publish: %v", err)
			}
			remoteObjects, remoteRefs := objects(t, r.dir), refs(t, r.dir)

			log.reset()
			c.Date = c.Date.Add(tc.later)
			again, err := p.Publish(context.Background(), c)
			if err != nil {
				t.Fatalf("second Publish: %v", err)
			}
			if again.Action != ActionUnchanged || again.Pushed || again.Commit != first.Commit || again.Previous != first.Commit {
				t.Fatalf("second result = %+v, want unchanged, not pushed, commit %s", again, first.Commit)
			}
			if got := gittest.Git(t, p.Dir, "rev-parse", again.LocalRef); got != first.Commit {
				t.Fatalf("local ref = %s, want the branch's commit %s", got, first.Commit)
			}
			if got := refs(t, r.dir); got != remoteRefs {
				t.Fatalf("remote refs moved:\n%s\nwant\n%s", got, remoteRefs)
			}
			if got := objects(t, r.dir); got != remoteObjects {
				t.Fatal("the remote received objects although nothing changed")
			}
			for _, sub := range log.subcommands() {
				if sub == "push" || sub == "fetch" {
					t.Fatalf("an unchanged publication ran git %s:\n%s", sub, log.joined())
				}
			}
		})
	}
}

func TestPublishNewerChangeReplacesBranch(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	older := resultsChange(t, r.base)
	first, err := p.Publish(context.Background(), older)
	if err != nil {
		t.Fatal(err)
	}

	newer := resultsChange(t, r.base)
	newer.Date = older.Date.Add(24 * time.Hour)
	delete(newer.Files, resultsIn+"guard.log")
	newer.Files[reportAt] = []byte("# ROCm decode profile, gfx1151, 2026-10-01\n")
	newer.Files["src/lib.rs"] = []byte("pub fn gate() -> bool { true }\n")
	res, err := p.Publish(context.Background(), newer)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if res.Action != ActionUpdated || !res.Pushed || res.Previous != first.Commit || res.Commit == first.Commit {
		t.Fatalf("result = %+v, want updated from %s", res, first.Commit)
	}
	if got := r.ref(t, "refs/heads/"+botBranch); got != res.Commit {
		t.Fatalf("remote branch = %s, want %s", got, res.Commit)
	}
	if got := gittest.Git(t, r.dir, "rev-list", "--count", r.base+".."+res.Commit); got != "1" {
		t.Fatalf("the branch has %s commits on the base, want 1 (force-updated, not stacked)", got)
	}
	files := treeFiles(t, r.dir, res.Commit)
	if _, ok := files[resultsIn+"guard.log"]; ok {
		t.Error("guard.log of the older profile survived the update")
	}
	if got := string(catBlob(t, r.dir, res.Commit+":src/lib.rs")); got != "pub fn gate() -> bool { true }\n" {
		t.Errorf("patched source = %q", got)
	}
}

func TestPublishRaceIsRetriedAndWins(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, log := newPublisher(t, r)
	other := r.pusher(t)
	var theirs string
	p.beforePush = func(attempt int) {
		if attempt == 0 {
			theirs = other("pushed between our look and our push")
		}
	}
	res, err := p.Publish(context.Background(), resultsChange(t, r.base))
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if res.Retries != 1 || res.Action != ActionUpdated || !res.Pushed || res.Previous != theirs {
		t.Fatalf("result = %+v, want one retry that updated over %s", res, theirs)
	}
	if got := r.ref(t, "refs/heads/"+botBranch); got != res.Commit {
		t.Fatalf("remote branch = %s, want our commit %s", got, res.Commit)
	}
	if got := gittest.Git(t, r.dir, "rev-parse", res.Commit+"^"); got != r.base {
		t.Fatalf("parent = %s, want the base", got)
	}
	var pushes int
	for _, argv := range log.cmds {
		if slices.Contains(argv, "push") {
			pushes++
			if !slices.Contains(argv, "--force-with-lease=refs/heads/"+botBranch+":") && pushes == 1 {
				t.Errorf("first push did not lease on an absent branch: %q", argv)
			}
			if pushes == 2 && !slices.Contains(argv, "--force-with-lease=refs/heads/"+botBranch+":"+theirs) {
				t.Errorf("retry did not lease on the other pusher's commit: %q", argv)
			}
		}
	}
	if pushes != 2 {
		t.Fatalf("pushes = %d, want 2 (lost one, won one)", pushes)
	}
}

func TestPublishRaceGivesUpAndKeepsCommit(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	other := r.pusher(t)
	var last string
	p.beforePush = func(attempt int) { last = other("attempt " + string(rune('0'+attempt))) }
	c := resultsChange(t, r.base)

	res, err := p.Publish(context.Background(), c)
	var pe *PushError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a PushError", err)
	}
	if res.Retries != maxRetries || res.Pushed || pe.Commit != res.Commit || res.Commit == "" {
		t.Fatalf("result = %+v, error commit %s: want %d retries, not pushed, the commit named", res, pe.Commit, maxRetries)
	}
	for _, want := range []string{res.Commit, "someone else keeps pushing", res.LocalRef, "rerun"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if got := r.ref(t, "refs/heads/"+botBranch); got != last {
		t.Fatalf("remote branch = %s, want the other pusher's %s (never overwritten unseen)", got, last)
	}
	if got := gittest.Git(t, p.Dir, "rev-parse", res.LocalRef); got != res.Commit {
		t.Fatalf("local ref = %s, want the unpushed commit %s", got, res.Commit)
	}

	// Once the other pusher stops, a rerun pushes the very same commit.
	p.beforePush = nil
	again, err := p.Publish(context.Background(), c)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if again.Commit != res.Commit || again.Action != ActionUpdated || again.Previous != last {
		t.Fatalf("rerun = %+v, want commit %s updated over %s", again, res.Commit, last)
	}
}

func TestPublishRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	trace, err := os.ReadFile(testfix.Path(t, "rocprofv3", "gfx1201-sllm-component-rocm7.2.1", "component-m8_kernel_trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	guardLog := resultsChange(t, strings.Repeat("0", 40)).Files[resultsIn+"guard.log"]

	r := newRemote(t)
	tests := []struct {
		name   string
		edit   func(*Change, *Publisher)
		reason string
	}{
		{"default branch of the remote", func(c *Change, p *Publisher) { c.Branch = "main"; p.Branches = append(p.Branches, "main") }, `"main" is a default branch name`},
		{"master", func(c *Change, p *Publisher) { c.Branch = "master"; p.Branches = append(p.Branches, "master") }, `"master" is a default branch name`},
		{"configured default branch", func(c *Change, p *Publisher) {
			c.Branch, p.DefaultBranch = "trunk", "trunk"
			p.Branches = append(p.Branches, "trunk")
		}, "is the repository's default branch"},
		{"branch not configured", func(c *Change, _ *Publisher) { c.Branch = "perfbot/other" }, "not one of the configured bot branches"},
		{"no branches configured", func(_ *Change, p *Publisher) { p.Branches = nil }, "no bot branches are configured"},
		{"branch given as a ref", func(c *Change, p *Publisher) { c.Branch = "refs/heads/x"; p.Branches = []string{c.Branch} }, "without refs/heads/"},
		{"branch with ..", func(c *Change, p *Publisher) { c.Branch = "perfbot/a..b"; p.Branches = []string{c.Branch} }, "not valid"},
		{"short base", func(c *Change, _ *Publisher) { c.Base = c.Base[:8] }, "not a full 40-hex commit SHA"},
		{"absolute path", func(c *Change, _ *Publisher) { c.Files["/etc/passwd"] = []byte("x") }, "is absolute"},
		{"escaping path", func(c *Change, _ *Publisher) { c.Files["docs/../../x"] = []byte("x") }, "leaves the repository"},
		{"dot-dot path", func(c *Change, _ *Publisher) { c.Files["../x"] = []byte("x") }, "leaves the repository"},
		{"inside .git", func(c *Change, _ *Publisher) { c.Files[".git/hooks/pre-commit"] = []byte("x") }, "inside .git"},
		{"inside .GIT deeper", func(c *Change, _ *Publisher) { c.Files["sub/.GIT/config"] = []byte("x") }, "inside .git"},
		{"unclean path", func(c *Change, _ *Publisher) { c.Files["docs//x.md"] = []byte("x") }, "not clean"},
		{"dot component", func(c *Change, _ *Publisher) { c.Files["./docs/x.md"] = []byte("x") }, "not clean"},
		{"trailing slash", func(c *Change, _ *Publisher) { c.Files["docs/"] = []byte("x") }, "not clean"},
		{"backslash", func(c *Change, _ *Publisher) { c.Files[`docs\x.md`] = []byte("x") }, "backslash"},
		{"empty path", func(c *Change, _ *Publisher) { c.Files[""] = []byte("x") }, "empty path"},
		{"bad remove path", func(c *Change, _ *Publisher) { c.Remove = []string{"../src"} }, "remove: path"},
		{"kernel trace", func(c *Change, _ *Publisher) {
			c.Files[resultsIn+"Qwen3-30B-A3B-4bit_greedy_kernel_trace.csv"] = trace
		}, "is a profiler trace: traces are not committed, upload them as workflow artifacts"},
		{"converted trace", func(c *Change, _ *Publisher) { c.Files["out_kernel_trace.csv"] = trace }, "profiler trace"},
		{"rocpd database", func(c *Change, _ *Publisher) { c.Files["host/123_results.db"] = []byte("SQLite format 3") }, "profiler trace"},
		{"oversized file", func(c *Change, p *Publisher) { p.MaxFileSize = int64(len(guardLog)) - 1 }, "guard.log is 35024 bytes, over the 35023-byte bound for committed files"},
		{"file and directory", func(c *Change, _ *Publisher) { c.Files["docs/benchmark_results"] = []byte("x") }, "both as a file and as the directory"},
		{"written and removed", func(c *Change, _ *Publisher) { c.Remove = []string{reportAt} }, "both written and removed"},
		{"empty message", func(c *Change, _ *Publisher) { c.Message = " \n" }, "commit message is empty"},
		{"no identity", func(c *Change, _ *Publisher) { c.Author = Identity{} }, "needs a name and an email"},
		{"identity with brackets", func(c *Change, _ *Publisher) { c.Author.Email = "a>b" }, "contains <, >"},
		{"no date", func(c *Change, _ *Publisher) { c.Date = time.Time{} }, "date is not set"},
		{"nothing to publish", func(c *Change, _ *Publisher) { c.Files = nil }, "no files to write or remove"},
		// Refused by the shape of the base tree, still before anything is written.
		{"file over a base directory", func(c *Change, _ *Publisher) { c.Files["src"] = []byte("x") }, "src is a directory in the base commit"},
		{"file under a base file", func(c *Change, _ *Publisher) { c.Files["README.md/x"] = []byte("x") }, "README.md is a file in the base commit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, log := newPublisher(t, r)
			c := resultsChange(t, r.base)
			tc.edit(&c, p)
			remoteRefs, remoteObjects := refs(t, r.dir), objects(t, r.dir)
			localRefs, localObjects := refs(t, p.Dir), objects(t, p.Dir)

			_, err := p.Publish(context.Background(), c)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("error %q does not say %q", err, tc.reason)
			}
			if refs(t, r.dir) != remoteRefs || objects(t, r.dir) != remoteObjects {
				t.Fatal("a refused change wrote to the remote")
			}
			if refs(t, p.Dir) != localRefs || objects(t, p.Dir) != localObjects {
				t.Fatal("a refused change wrote to the local repository")
			}
			for _, sub := range log.subcommands() {
				if slices.Contains([]string{"hash-object", "commit-tree", "update-ref", "push", "fetch"}, sub) {
					t.Fatalf("a refused change ran git %s", sub)
				}
			}
		})
	}
}
