package publish

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/patch/patchrun"
)

// hostileCommit pushes a commit on top of the target's base whose checker, Makefile
// target and verification script each write a canary file when run, and fetches it
// into the checkout. It returns the commit and the canary's path.
func hostileCommit(t *testing.T, tg *target) (string, string) {
	t.Helper()
	canary := filepath.Join(t.TempDir(), "canary")
	seed := filepath.Join(t.TempDir(), "hostile")
	gitT(t, filepath.Dir(seed), "clone", "--quiet", tg.bare, seed)
	checker := filepath.Join(seed, filepath.FromSlash(patch.CheckerPath))
	src := readFile(t, checker)
	// After the docstring, so the file still reads as the checker the patcher expects.
	src = strings.Replace(src, "from __future__ import annotations\n",
		"from __future__ import annotations\nopen("+pyQuote(canary)+", \"a\").write(\"checker\\n\")\n", 1)
	writeFile(t, checker, src)
	writeFile(t, filepath.Join(seed, "Makefile"), "verify-kernel-port-dispatch:\n\techo make >> "+canary+"\n")
	writeFile(t, filepath.Join(seed, "scripts", "verify.sh"), "#!/bin/sh\necho verify >> "+canary+"\n")
	if err := os.Chmod(filepath.Join(seed, "scripts", "verify.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, seed, "add", "-A")
	gitT(t, seed, "commit", "--quiet", "-m", "hostile")
	gitT(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/hostile")
	gitT(t, tg.checkout, "fetch", "--quiet", "origin", "hostile")
	return gitT(t, seed, "rev-parse", "HEAD"), canary
}

func pyQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// Publishing runs nothing of the repository: the pinned commit's checker, its Makefile
// target and its verification commands would each write a canary, yet publish leaves
// none and commits exactly the patched sources gemm_patch.json carries.
func TestPublishRunsNothingOfTheRepository(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	commit, canary := hostileCommit(t, tg)
	res := layResults(t, commit, profile{date: "2026-09-30", tests: allPassed})
	dir := filepath.Join(res, "gfx1151_"+commit[:8])
	o, err := patch.ParseOutcome([]byte(readFile(t, filepath.Join(dir, gemmTests))))
	if err != nil {
		t.Fatal(err)
	}
	// The patch job on the GPU runner runs the pinned code: the canary proves it would.
	prep, err := patchrun.Prepare(context.Background(), patchrun.PrepareOptions{RepoDir: tg.checkout, Commit: commit, Outcome: o,
		Verify: patchrun.ShippedVerify})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, canary); got != "checker\nchecker\nmake\n" {
		t.Fatalf("the hostile commit's code did not run in the patch job (canary %q): the test proves nothing", got)
	}
	if err := prep.Write(filepath.Join(dir, patch.PreparedFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(canary); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	cfg := testConfig()
	cfg.Verify = [][]string{{"scripts/verify.sh"}, {"python3", patch.CheckerPath}, {"make", patch.MakeTarget}}
	sum, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: cfg, Sink: ToDir(out)}, Base: commit})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatalf("publishing ran the repository's code: the canary exists (%v)", err)
	}
	if len(prep.Files) == 0 {
		t.Fatal("the prepared patch changed nothing: the test proves nothing")
	}
	// The hostile commit is not on main: the patch is shown, not committed, and the
	// results commit sits on main's head with main's own sources.
	pr := readFile(t, filepath.Join(out, DryPR))
	for _, f := range prep.Files {
		if got := tg.file(t, sum.Git.Commit, f.Path); got != tg.file(t, tg.base, f.Path) {
			t.Errorf("%s on the bot branch is not main's: the patch of a commit not on main was committed", f.Path)
		}
		if !slices.Contains(sum.Patch.Pending, f.Path) || slices.Contains(sum.Patch.Changed, f.Path) {
			t.Errorf("the summary does not list %s as pending: %+v", f.Path, sum.Patch)
		}
		if !strings.Contains(pr, "diff --git a/"+f.Path) {
			t.Errorf("the pull request does not show the patch of %s", f.Path)
		}
	}
	if sum.OnMain || sum.Git.Base != tg.base {
		t.Errorf("on main %t, base %s: want the commit off main and the results on main's head %s", sum.OnMain, sum.Git.Base, tg.base)
	}
	if sum.Draft || !sum.Verify.Passed || len(sum.Verify.Commands) != 2 || sum.Verify.Commands[1] != "make "+patch.MakeTarget {
		t.Errorf("draft %t verify %+v: want the prepared verification, not the configured one", sum.Draft, sum.Verify)
	}
	if !strings.Contains(pr, "Checker `python3 "+patch.CheckerPath+"`: **passed**") {
		t.Errorf("the pull request lacks the prepared checker verdict:\n%s", pr)
	}
}

// Without gemm_patch.json the numeric tests' patch is not applied: the pull request is
// a draft that says so, and no source file is committed.
func TestPublishWithoutPreparedPatchIsADraft(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layResults(t, tg.base, profile{date: "2026-09-30", tests: allPassed})
	out := t.TempDir()
	sum, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if !sum.Draft || sum.Verify.Passed || sum.Patch == nil || !strings.Contains(sum.Patch.Error, "no gemm_patch.json") {
		t.Errorf("draft %t verify %+v patch %+v", sum.Draft, sum.Verify, sum.Patch)
	}
	for _, f := range sum.Files {
		if f == patch.RustPath || f == patch.CheckerPath {
			t.Errorf("%s was committed without a prepared patch", f)
		}
	}
	pr := readFile(t, filepath.Join(out, DryPR))
	for _, s := range []string{"**Draft:**", "the patch job did not run after gemm-tests", "Not verified"} {
		if !strings.Contains(pr, s) {
			t.Errorf("the pull request lacks %q:\n%s", s, pr)
		}
	}
}

// A prepared patch of another commit or another outcome is not used: the pull request
// is a draft naming the mismatch. One that fails the strict reader stops publishing.
func TestPublishRefusesAPreparedPatchOfOtherResults(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	commit, _ := hostileCommit(t, tg)

	// Prepared on the hostile commit, laid beside results of the base.
	other := layResults(t, commit, profile{date: "2026-09-30", tests: allPassed})
	res := layResults(t, tg.base, profile{date: "2026-09-30", tests: allPassed})
	o, _ := patch.ParseOutcome([]byte(readFile(t, filepath.Join(other, "gfx1151_"+commit[:8], gemmTests))))
	prep, err := patchrun.Prepare(context.Background(), patchrun.PrepareOptions{RepoDir: tg.checkout, Commit: commit, Outcome: o, Verify: [][]string{}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(res, "gfx1151_"+tg.base[:8], patch.PreparedFile)
	if err := prep.Write(file); err != nil {
		t.Fatal(err)
	}
	sum, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir())}})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if !sum.Draft || sum.Patch == nil || !strings.Contains(sum.Patch.Error, "not on the profiled commit") || len(sum.Patch.Changed) != 0 {
		t.Errorf("draft %t patch %+v", sum.Draft, sum.Patch)
	}

	// A path outside the two files the patch edits, in the files it carries (the last
	// mention of the path; the report lists it first).
	pushed := tg.branch(t)
	b := readFile(t, file)
	at := strings.LastIndex(b, `"path": "`+patch.CheckerPath+`"`)
	if at < 0 || at == strings.Index(b, `"path": "`+patch.CheckerPath+`"`) {
		t.Fatalf("the prepared patch carries no checker content:\n%s", b)
	}
	writeFile(t, file, b[:at]+`"path": ".github/workflows/ci.yml"`+b[at+len(`"path": "`+patch.CheckerPath+`"`):])
	_, err = Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir())}})
	if err == nil || !strings.Contains(err.Error(), "not a file the patch edits") {
		t.Errorf("a prepared patch for another path: %v", err)
	}
	if tg.branch(t) != pushed {
		t.Error("the refused patch was pushed")
	}
}

// The attribution rules come from the base commit's git objects: a change in the
// checkout's working tree is not read, and a rules path that is a symbolic link in the
// commit is refused.
func TestPublishReadsRulesFromTheBaseCommit(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	rules := readFile(t, "../../runner/attrib/default_rules.yml")
	seed := filepath.Join(t.TempDir(), "rules")
	gitT(t, filepath.Dir(seed), "clone", "--quiet", tg.bare, seed)
	writeFile(t, filepath.Join(seed, ".github", "perfbot-rules.yml"), rules)
	if err := os.Symlink("perfbot-rules.yml", filepath.Join(seed, ".github", "link.yml")); err != nil {
		t.Fatal(err)
	}
	gitT(t, seed, "add", "-A")
	gitT(t, seed, "commit", "--quiet", "-m", "rules")
	gitT(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/rules")
	gitT(t, tg.checkout, "fetch", "--quiet", "origin", "rules")
	commit := gitT(t, seed, "rev-parse", "HEAD")

	res := layResults(t, commit, profile{date: "2026-09-30"})
	cfg := testConfig()
	cfg.Rules = ".github/perfbot-rules.yml"
	out := t.TempDir()
	sum, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: cfg, Sink: ToDir(out)}, Base: commit})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	page := tg.file(t, sum.Git.Commit, sum.Report)
	if !strings.Contains(page, "Rules: `.github/perfbot-rules.yml` (sha256 `") {
		t.Errorf("the page does not name the base commit's rules file with its digest:\n%s", page)
	}

	cfg.Rules = ".github/link.yml"
	_, err = Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: cfg, Sink: ToDir(t.TempDir())}, Base: commit})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("rules through a symbolic link: %v", err)
	}
	cfg.Rules = ".github/missing.yml"
	_, err = Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: cfg, Sink: ToDir(t.TempDir())}, Base: commit})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a rules file the commit lacks: %v", err)
	}
}

// The prepared sources are committed only when they are the patch of the base commit's
// own files: a gemm_patch.json with other content (a valid file otherwise) makes a
// draft that says so, and no source is committed.
func TestPublishRefusesPreparedSourcesThatAreNotThePatch(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layResults(t, tg.base, profile{date: "2026-09-30", tests: allPassed})
	prep := prepare(t, tg, res, [][]string{}, "")
	prep.Files[0].Content += "fn planted() {}\n"
	if err := prep.Write(filepath.Join(res, "gfx1151_"+tg.base[:8], patch.PreparedFile)); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if !sum.Draft || sum.Patch == nil || !strings.Contains(sum.Patch.Error, "is not what the patch makes of the pinned commit's file") || len(sum.Patch.Changed) != 0 {
		t.Errorf("draft %t patch %+v", sum.Draft, sum.Patch)
	}
	for _, f := range sum.Files {
		if f == patch.RustPath || f == patch.CheckerPath {
			t.Errorf("%s was committed from a patch that is not the patch", f)
		}
	}
}
