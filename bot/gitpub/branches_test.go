package gitpub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/gittest"

	"github.com/google/go-cmp/cmp"
)

func TestBranchName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix string
		t      Trigger
		want   string
		bad    string
	}{
		{botBranch, Trigger{TriggerPR, 1900}, "perfbot/rocm-profile-pr-1900", ""},
		{botBranch, Trigger{TriggerIssue, 1814}, "perfbot/rocm-profile-issue-1814", ""},
		{"perfbot/rocm-baseline", Trigger{Kind: TriggerNightly}, "perfbot/rocm-baseline", ""},
		{"bot", Trigger{TriggerPR, maxNumber}, "bot-pr-2147483647", ""},
		{botBranch, Trigger{TriggerPR, 0}, "", "between 1 and"},
		{botBranch, Trigger{TriggerIssue, -3}, "", "between 1 and"},
		{botBranch, Trigger{TriggerPR, maxNumber + 1}, "", "between 1 and"},
		{botBranch, Trigger{TriggerNightly, 7}, "", "no number"},
		{botBranch, Trigger{"push", 1}, "", "unknown trigger kind"},
		{"", Trigger{TriggerPR, 1}, "", "is empty"},
		{"perfbot/x..y", Trigger{TriggerPR, 1}, "", "contains .."},
		{"perfbot/rocm-profile/", Trigger{TriggerPR, 1}, "", "ends with /"},
		{"perfbot/x.lock", Trigger{Kind: TriggerNightly}, "", ".lock"},
	}
	for _, tc := range tests {
		got, err := BranchName(tc.prefix, tc.t)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("BranchName(%q, %v) = %q, %v; want an error saying %q", tc.prefix, tc.t, got, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("BranchName(%q, %v) = %q, %v; want %q", tc.prefix, tc.t, got, err, tc.want)
			continue
		}
		// Git itself accepts the name, it never nests below the prefix (git cannot hold
		// both a and a/b), and it parses back to its trigger.
		if out, err := gittest.Run(gittest.Command(t.TempDir(), "check-ref-format", "--branch", got)); err != nil || out != got {
			t.Errorf("git refuses %q: %v", got, err)
		}
		if strings.HasPrefix(got, tc.prefix+"/") {
			t.Errorf("%q nests below %q", got, tc.prefix)
		}
		if back, ok := ParseBranchName(tc.prefix, got); !ok || back != tc.t {
			t.Errorf("ParseBranchName(%q, %q) = %v, %v; want %v", tc.prefix, got, back, ok, tc.t)
		}
	}
}

func TestParseBranchNameRefusesOtherNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"perfbot/rocm-profile-mywork", // a person's branch beside the bot's
		"perfbot/rocm-profilex",
		"perfbot/rocm-profile/pr-1",
		"perfbot/rocm-profile-pr-",
		"perfbot/rocm-profile-pr-01",
		"perfbot/rocm-profile-pr-0",
		"perfbot/rocm-profile-pr-1x",
		"perfbot/rocm-profile-pr-+1",
		"perfbot/rocm-profile-pr-1-pr-2",
		"perfbot/rocm-profile-pr-99999999999",
		"perfbot/rocm-profile-nightly",
		"perfbot/rocm-baseline",
		"main",
		"",
	} {
		if tr, ok := ParseBranchName(botBranch, name); ok {
			t.Errorf("ParseBranchName(%q) = %v, want no bot branch", name, tr)
		}
	}
	if _, ok := ParseBranchName("", ""); ok {
		t.Error("an empty prefix matched")
	}
}

// pushTo makes a commit in the seed clone on top of parent and pushes it to the remote's
// branch; it returns the commit.
func (r *remote) pushTo(t testing.TB, parent, branch, note string) string {
	t.Helper()
	gittest.Git(t, r.seed, "checkout", "--quiet", "--detach", parent)
	writeFile(t, filepath.Join(r.seed, "notes", strings.ReplaceAll(branch, "/", "_")+".txt"), note)
	gittest.Git(t, r.seed, "add", "-A")
	gittest.Git(t, r.seed, "commit", "--quiet", "-m", "note: "+note)
	sha := gittest.Git(t, r.seed, "rev-parse", "HEAD")
	gittest.Git(t, r.seed, "push", "--quiet", "--force", "hub", sha+":refs/heads/"+branch)
	return sha
}

// advanceMain adds a commit to the remote's default branch (as a merge would) and
// records it as the new expected default head.
func (r *remote) advanceMain(t testing.TB, note string) string {
	t.Helper()
	r.base = r.pushTo(t, r.base, "main", note)
	return r.base
}

func TestBranchHead(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	ctx := context.Background()

	// A branch made after the clone: its head is read from the remote and fetched.
	feature := r.pushTo(t, r.base, "feature", "a pull request's head")
	got, err := p.BranchHead(ctx, "feature")
	if err != nil || got != feature {
		t.Fatalf("BranchHead(feature) = %q, %v; want %s", got, err, feature)
	}
	if _, err := gittest.Run(gittest.Command(p.Dir, "cat-file", "-e", feature+"^{commit}")); err != nil {
		t.Fatalf("the head was not fetched: %v", err)
	}
	// The default branch moves: the new head, not the clone's stale one.
	head := r.advanceMain(t, "merged")
	branch, sha, err := p.DefaultBranchHead(ctx)
	if err != nil || branch != "main" || sha != head {
		t.Fatalf("DefaultBranchHead = %q, %q, %v; want main at %s", branch, sha, err, head)
	}
	p.DefaultBranch = ""
	if branch, sha, err = p.DefaultBranchHead(ctx); err != nil || branch != "main" || sha != head {
		t.Fatalf("DefaultBranchHead asking the remote = %q, %q, %v; want main at %s", branch, sha, err, head)
	}

	// A missing branch is told apart from a failure; a suffix of a branch is not it.
	for _, name := range []string{"gone", "ature", "heads/feature"} {
		_, err = p.BranchHead(ctx, name)
		if !errors.Is(err, ErrNoBranch) || !strings.Contains(err.Error(), name) {
			t.Errorf("BranchHead(%q) = %v, want ErrNoBranch naming it", name, err)
		}
	}
	if _, err := p.BranchHead(ctx, "bad..name"); err == nil || errors.Is(err, ErrNoBranch) {
		t.Errorf("BranchHead(bad..name) = %v, want an invalid-name error", err)
	}
	// An unreachable remote is an error, not "no branch".
	broken := &Publisher{Dir: p.Dir, Remote: "file://" + filepath.Join(t.TempDir(), "nothing.git")}
	if _, err := broken.BranchHead(ctx, "main"); err == nil || errors.Is(err, ErrNoBranch) {
		t.Errorf("BranchHead on an unreachable remote = %v, want a failure that is not ErrNoBranch", err)
	}
}

// TestPublishOnDefaultHeadHoldsOnlyPublishedFiles publishes the results of a pull
// request's head on the default branch's head, as a results pull request must be
// built: the pull request then shows the bot's files and nothing of the measured code.
func TestPublishOnDefaultHeadHoldsOnlyPublishedFiles(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	ctx := context.Background()
	// The measured commit is a pull request's head, not in the default branch.
	gittest.Git(t, r.seed, "checkout", "--quiet", "-b", "pr-head", r.base)
	writeFile(t, filepath.Join(r.seed, "src/lib.rs"), "pub fn gate() -> bool { unreviewed() }\n")
	gittest.Git(t, r.seed, "commit", "--quiet", "-am", "unreviewed change")
	measured := gittest.Git(t, r.seed, "rev-parse", "HEAD")
	gittest.Git(t, r.seed, "push", "--quiet", "hub", "pr-head:refs/heads/feature")
	// A flat bot branch from before per-request branches is still there.
	flat := r.pushTo(t, r.base, botBranch, "an older results commit")

	p, _ := newPublisher(t, r)
	head, err := p.BranchHead(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	in, err := p.IsAncestor(ctx, measured, head)
	if err != nil || in {
		t.Fatalf("IsAncestor(pull request head, main) = %v, %v; want false", in, err)
	}
	branch, err := BranchName(botBranch, Trigger{TriggerPR, 1900})
	if err != nil {
		t.Fatal(err)
	}
	c := resultsChange(t, head)
	c.Branch = branch
	res, err := p.Publish(ctx, c)
	if err != nil {
		t.Fatalf("Publish on the default head: %v", err)
	}
	if res.Action != ActionCreated || r.ref(t, "refs/heads/"+branch) != res.Commit {
		t.Fatalf("result = %+v, remote %s = %s", res, branch, r.ref(t, "refs/heads/"+branch))
	}
	if got := r.ref(t, "refs/heads/"+botBranch); got != flat {
		t.Fatalf("the flat bot branch moved to %s", got)
	}

	// What the pull request main <- branch shows: the published files, one commit.
	assertOnlyPublished := func(c Change) {
		t.Helper()
		diff := strings.Split(gittest.Git(t, r.dir, "diff", "--name-only", "main..."+branch), "\n")
		if d := cmp.Diff(sortedKeys(c.Files), diff); d != "" {
			t.Fatalf("main...%s (-published +in the diff):\n%s", branch, d)
		}
		if n := gittest.Git(t, r.dir, "rev-list", "--count", "main.."+branch); n != "1" {
			t.Fatalf("main..%s has %s commits, want 1", branch, n)
		}
		if got := gittest.Git(t, r.dir, "show", branch+":src/lib.rs"); strings.Contains(got, "unreviewed") {
			t.Fatal("the measured commit's code is on the bot branch")
		}
	}
	assertOnlyPublished(c)

	// A rerun of the same request on the same head changes nothing.
	again, err := p.Publish(ctx, c)
	if err != nil || again.Action != ActionUnchanged || again.Commit != res.Commit {
		t.Fatalf("rerun = %+v, %v; want unchanged %s", again, err, res.Commit)
	}

	// The default branch moves (a merge): the rerun rebuilds on the new head and
	// replaces the branch's one commit in place.
	newHead := r.advanceMain(t, "another change merged")
	head2, err := p.BranchHead(ctx, "main")
	if err != nil || head2 != newHead {
		t.Fatalf("BranchHead after the merge = %q, %v; want %s", head2, err, newHead)
	}
	c.Base = head2
	moved, err := p.Publish(ctx, c)
	if err != nil || moved.Action != ActionUpdated || moved.Previous != res.Commit {
		t.Fatalf("publish after main moved = %+v, %v; want updated from %s", moved, err, res.Commit)
	}
	if got := gittest.Git(t, r.dir, "rev-parse", branch+"^"); got != newHead {
		t.Fatalf("parent = %s, want the new default head %s", got, newHead)
	}
	assertOnlyPublished(c)
}

func TestIsAncestor(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	ctx := context.Background()
	old := r.base
	mid := r.advanceMain(t, "second")
	head := r.advanceMain(t, "third")
	side := r.pushTo(t, mid, "feature", "side work")
	gittest.Git(t, r.dir, "config", "uploadpack.allowFilter", "true")

	cases := []struct {
		commit, of string
		want       bool
	}{
		{old, head, true},
		{mid, head, true},
		{head, head, true},
		{head, old, false},
		{side, head, false},
		{mid, side, true},
	}
	check := func(t *testing.T, p *Publisher) {
		t.Helper()
		for _, c := range cases {
			got, err := p.IsAncestor(ctx, c.commit, c.of)
			if err != nil || got != c.want {
				t.Errorf("IsAncestor(%.8s, %.8s) = %v, %v; want %v", c.commit, c.of, got, err, c.want)
			}
		}
	}
	t.Run("full clone", func(t *testing.T) {
		p, _ := newPublisher(t, r)
		check(t, p)
		missing := strings.Repeat("ab", 20)
		if _, err := p.IsAncestor(ctx, missing, head); err == nil || !strings.Contains(err.Error(), "not on the remote") {
			t.Errorf("IsAncestor of a commit the remote lacks = %v, want an error saying so", err)
		}
		if _, err := p.IsAncestor(ctx, "main", head); err == nil || !strings.Contains(err.Error(), "full commit SHA") {
			t.Errorf("IsAncestor(main, ...) = %v, want a refusal of a non-SHA", err)
		}
	})
	t.Run("partial clone", func(t *testing.T) {
		p, err := Clone(ctx, r.url, filepath.Join(t.TempDir(), "pub.git"),
			CloneOptions{Branches: []string{botBranch}, Filter: "blob:none"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, p)
	})
	t.Run("shallow clone", func(t *testing.T) {
		for _, c := range cases {
			p := shallowClone(t, r)
			// Git alone, after fetching the commit, answers from the cut history.
			gittest.Git(t, p.Dir, "fetch", "--quiet", "origin", c.commit, c.of)
			_, plain := gittest.Run(gittest.Command(p.Dir, "merge-base", "--is-ancestor", c.commit, c.of))
			got, err := p.IsAncestor(ctx, c.commit, c.of)
			if err != nil || got != c.want {
				t.Errorf("shallow IsAncestor(%.8s, %.8s) = %v, %v; want %v (plain git says %v)", c.commit, c.of, got, err, c.want, plain == nil)
			}
		}
		// The test proves something: plain git is wrong in a fresh shallow clone.
		p := shallowClone(t, r)
		gittest.Git(t, p.Dir, "fetch", "--quiet", "origin", old)
		if _, err := gittest.Run(gittest.Command(p.Dir, "merge-base", "--is-ancestor", old, head)); err == nil {
			t.Fatal("plain git answers right in the shallow clone: the test proves nothing")
		}
	})
	t.Run("shallow clone without the remote", func(t *testing.T) {
		p := shallowClone(t, r)
		gittest.Git(t, p.Dir, "fetch", "--quiet", "origin", old)
		p.Remote = "file://" + filepath.Join(t.TempDir(), "gone.git")
		got, err := p.IsAncestor(ctx, old, head)
		if !errors.Is(err, ErrShallow) || got {
			t.Fatalf("IsAncestor with the history cut and no remote = %v, %v; want ErrShallow, never a plain no", got, err)
		}
	})
}

// shallowClone is a depth-1 bare clone of the remote's default branch, as CI checkouts
// often are.
func shallowClone(t *testing.T, r *remote) *Publisher {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shallow.git")
	gittest.Git(t, filepath.Dir(dir), "clone", "--quiet", "--bare", "--depth", "1", "--branch", "main", r.url, dir)
	if got := gittest.Git(t, dir, "rev-parse", "--is-shallow-repository"); got != "true" {
		t.Fatalf("the clone is not shallow (%s)", got)
	}
	return &Publisher{Dir: dir, DefaultBranch: "main", Branches: []string{botBranch}}
}

func TestListBranches(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	ctx := context.Background()
	flat := r.pushTo(t, r.base, botBranch, "flat")
	pr := r.pushTo(t, r.base, botBranch+"-pr-1900", "pr")
	issue := r.pushTo(t, r.base, botBranch+"-issue-1814", "issue")
	for _, other := range []string{botBranch + "-mywork", botBranch + "x", "perfbot/rocm-baseline", "feature/" + botBranch, "feature/x"} {
		r.pushTo(t, r.base, other, "not the profile bot's")
	}
	gittest.Git(t, r.dir, "update-ref", "refs/pull/1900/head", pr)
	gittest.Git(t, r.dir, "update-ref", "refs/tags/"+botBranch+"-pr-7", pr)

	p, _ := newPublisher(t, r)
	got, err := p.ListBranches(ctx, botBranch)
	if err != nil {
		t.Fatalf("ListBranches: %v", err)
	}
	want := []Branch{
		{botBranch, flat, Trigger{Kind: TriggerNightly}},
		{botBranch + "-issue-1814", issue, Trigger{TriggerIssue, 1814}},
		{botBranch + "-pr-1900", pr, Trigger{TriggerPR, 1900}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ListBranches (-want +got):\n%s", d)
	}
	if got, err := p.ListBranches(ctx, "perfbot/none"); err != nil || len(got) != 0 {
		t.Fatalf("ListBranches of an unused prefix = %v, %v; want none", got, err)
	}
	if _, err := p.ListBranches(ctx, "perfbot/x..y"); err == nil {
		t.Fatal("an invalid prefix was listed")
	}

	// The count is bounded; the first MaxBranches still come back for a cleanup.
	var stdin strings.Builder
	for i := 1; i <= MaxBranches+5; i++ {
		fmt.Fprintf(&stdin, "create refs/heads/perfbot/many-pr-%d %s\n", i, r.base)
	}
	cmd := gittest.Command(r.dir, "update-ref", "--stdin")
	cmd.Stdin = strings.NewReader(stdin.String())
	if _, err := gittest.Run(cmd); err != nil {
		t.Fatal(err)
	}
	many, err := p.ListBranches(ctx, "perfbot/many")
	if !errors.Is(err, ErrTooManyBranches) || len(many) != MaxBranches {
		t.Fatalf("ListBranches of %d = %d branches, %v; want %d and ErrTooManyBranches", MaxBranches+5, len(many), err, MaxBranches)
	}
	if !slices.IsSortedFunc(many, func(a, b Branch) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("the listing is not sorted by name")
	}
}

func TestDeleteBranch(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	ctx := context.Background()
	p, log := newPublisher(t, r)
	branch, err := BranchName(botBranch, Trigger{TriggerIssue, 1814})
	if err != nil {
		t.Fatal(err)
	}
	c := resultsChange(t, r.base)
	c.Branch = branch
	res, err := p.Publish(ctx, c)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("moved", func(t *testing.T) {
		newer := r.pushTo(t, r.base, branch, "someone's fix on the bot branch")
		err := p.DeleteBranch(ctx, branch, res.Commit)
		if !errors.Is(err, ErrBranchMoved) {
			t.Fatalf("DeleteBranch with a stale SHA = %v, want ErrBranchMoved", err)
		}
		if got := r.ref(t, "refs/heads/"+branch); got != newer {
			t.Fatalf("the moved branch is at %q, want it kept at %s", got, newer)
		}
		// It moves between the look and the push: the lease keeps it.
		p.beforePush = func(int) { r.pushTo(t, r.base, branch, "pushed during the delete") }
		defer func() { p.beforePush = nil }()
		err = p.DeleteBranch(ctx, branch, newer)
		if !errors.Is(err, ErrBranchMoved) {
			t.Fatalf("DeleteBranch losing the race = %v, want ErrBranchMoved", err)
		}
		if got := r.ref(t, "refs/heads/"+branch); got == "" || got == newer {
			t.Fatalf("the branch is at %q, want the commit pushed during the delete", got)
		}
	})

	now := r.ref(t, "refs/heads/"+branch)
	log.reset()
	if err := p.DeleteBranch(ctx, branch, now); err != nil {
		t.Fatalf("DeleteBranch: %v", err)
	}
	if got := r.ref(t, "refs/heads/"+branch); got != "" {
		t.Fatalf("the branch is still there at %s", got)
	}
	if _, err := gittest.Run(gittest.Command(p.Dir, "rev-parse", "--verify", "--quiet", res.LocalRef)); err == nil {
		t.Fatalf("the local ref %s of the deleted branch is left", res.LocalRef)
	}
	if !strings.Contains(log.joined(), "--force-with-lease=refs/heads/"+branch+":"+now) {
		t.Fatalf("the delete did not push with a lease on %s:\n%s", now, log.joined())
	}
	if err := p.DeleteBranch(ctx, branch, now); !errors.Is(err, ErrNoBranch) {
		t.Fatalf("deleting again = %v, want ErrNoBranch", err)
	}
	// A later publication of the same request recreates it.
	if again, err := p.Publish(ctx, c); err != nil || again.Action != ActionCreated {
		t.Fatalf("publish after the delete = %+v, %v; want created", again, err)
	}
}

// TestDeleteBranchRefusesOtherBranches is the guard against deleting people's branches:
// whatever name and SHA a caller passes, only the bot's own branches go.
func TestDeleteBranchRefusesOtherBranches(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	ctx := context.Background()
	gittest.Git(t, r.dir, "branch", "trunk", "main")
	names := []string{
		"master", "trunk", "feature/x",
		botBranch + "-mywork", botBranch + "x", botBranch + "-pr-01",
		"perfbot/rocm-baseline", "feature/" + botBranch + "-pr-1",
	}
	for _, n := range names[2:] {
		r.pushTo(t, r.base, n, "someone's work")
	}
	gittest.Git(t, r.dir, "branch", "master", "main")
	pr := r.pushTo(t, r.base, botBranch+"-pr-5", "a bot branch")
	p, log := newPublisher(t, r)
	// Even a misconfiguration naming the default branches does not make them deletable.
	p.Branches = []string{botBranch, "main", "trunk", "master"}
	p.DefaultBranch = "trunk"
	before := refs(t, r.dir)
	log.reset()
	for _, n := range append([]string{"main"}, names...) {
		err := p.DeleteBranch(ctx, n, r.ref(t, "refs/heads/"+n))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), n) {
			t.Errorf("DeleteBranch(%q) = %v, want a refusal naming it", n, err)
		}
	}
	for _, sub := range log.subcommands() {
		if sub == "push" {
			t.Fatalf("a refused delete pushed:\n%s", log.joined())
		}
	}
	p.Branches = nil
	if err := p.DeleteBranch(ctx, botBranch+"-pr-5", pr); !errors.Is(err, ErrRefused) {
		t.Errorf("DeleteBranch with no configured bot branches = %v, want a refusal", err)
	}
	if err := (&Publisher{Dir: p.Dir, Branches: []string{botBranch}}).DeleteBranch(ctx, botBranch+"-pr-5", "HEAD"); !errors.Is(err, ErrRefused) {
		t.Errorf("DeleteBranch without a full SHA = %v, want a refusal", err)
	}
	if got := refs(t, r.dir); got != before {
		t.Fatalf("the remote's refs changed:\n%s\nwant\n%s", got, before)
	}
}

func TestBranchOpsOverHTTPKeepTheTokenOut(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	srv := gittest.NewHTTPServer(t, r.dir, goodToken)
	ctx := context.Background()
	log := &argvLog{}
	p, err := Clone(ctx, srv.URL, filepath.Join(t.TempDir(), "pub.git"),
		CloneOptions{Token: goodToken, Branches: []string{botBranch}, trace: log.record})
	if err != nil {
		t.Fatal(err)
	}
	feature := r.pushTo(t, r.base, "feature", "a pull request")
	bot := r.pushTo(t, r.base, botBranch+"-pr-3", "a bot branch")

	head, err := p.BranchHead(ctx, "feature")
	if err != nil || head != feature {
		t.Fatalf("BranchHead = %q, %v", head, err)
	}
	if in, err := p.IsAncestor(ctx, r.base, feature); err != nil || !in {
		t.Fatalf("IsAncestor = %v, %v", in, err)
	}
	list, err := p.ListBranches(ctx, botBranch)
	if err != nil || len(list) != 1 || list[0].SHA != bot {
		t.Fatalf("ListBranches = %v, %v", list, err)
	}
	if err := p.DeleteBranch(ctx, botBranch+"-pr-3", bot); err != nil {
		t.Fatalf("DeleteBranch: %v", err)
	}
	if r.ref(t, "refs/heads/"+botBranch+"-pr-3") != "" {
		t.Fatal("the branch was not deleted")
	}
	good, bad := srv.Requests(goodToken)
	if good == 0 || bad != 0 {
		t.Fatalf("requests with the token = %d, without or with another = %d", good, bad)
	}
	assertNoSecret(t, log.joined(), goodToken, "argv")

	wrong := "ghs_WrongTokenThatMustNotLeak0123456789"
	p.Token = wrong
	for name, err := range map[string]error{
		"BranchHead":   func() error { _, err := p.BranchHead(ctx, "feature"); return err }(),
		"ListBranches": func() error { _, err := p.ListBranches(ctx, botBranch); return err }(),
		"DeleteBranch": p.DeleteBranch(ctx, botBranch+"-pr-3", bot),
	} {
		if err == nil || !strings.Contains(err.Error(), "refused the credentials") {
			t.Errorf("%s with a wrong token = %v, want the credentials refused", name, err)
			continue
		}
		assertNoSecret(t, err.Error(), wrong, name+"'s error")
	}
	assertNoSecret(t, log.joined(), wrong, "argv")
}

func TestGitOutputIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "--quiet")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	oid := gittest.Git(t, dir, "hash-object", "-w", big)
	g := &gitRunner{dir: dir}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := g.run(ctx, gitOpts{maxOut: 4096}, "cat-file", "blob", oid)
	if !errors.Is(err, errTooMuchOutput) || len(out) > 4096 {
		t.Fatalf("a 1 MiB output with a 4 KiB bound = %d bytes, %v; want errTooMuchOutput", len(out), err)
	}
	out, err = g.run(ctx, gitOpts{maxOut: 2 << 20}, "cat-file", "blob", oid)
	if err != nil || len(out) != 1<<20 {
		t.Fatalf("a 1 MiB output under a 2 MiB bound = %d bytes, %v", len(out), err)
	}
}
