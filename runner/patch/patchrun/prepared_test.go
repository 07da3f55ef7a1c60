package patchrun

import (
	"github.com/lablup/perfbot/runner/patch"

	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/runner/sandbox"
)

// gitRepo commits a variant's test copy into a fresh repository and returns it and
// the commit.
func gitRepo(t *testing.T, variant string) (string, string) {
	t.Helper()
	dir := copyRepo(t, variant)
	return dir, gittest.Repo(t, dir)
}

func gitStatus(t *testing.T, dir string) string {
	t.Helper()
	out, err := gittest.Run(gittest.Command(dir, "status", "--porcelain", "--untracked-files=all"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The shipped verification is the checker alone, as the configuration's default says.
func TestShippedVerifyIsTheConfigDefault(t *testing.T) {
	if d := config.Default().Verify; !cmp.Equal(d, ShippedVerify) {
		t.Errorf("config default verify %q, ShippedVerify %q", d, ShippedVerify)
	}
}

// Prepare patches a scratch worktree of the commit, keeps the changed files' contents
// and the verification, leaves the checkout alone, and its JSON reads back the same.
func TestPrepareAndParse(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"pass", "fail"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			repo, commit := gitRepo(t, "upstream")
			o := passOutcome(t)
			if mode == "fail" {
				o = failOutcome(t)
			}
			scratch := t.TempDir()
			p, err := Prepare(context.Background(), PrepareOptions{RepoDir: repo, Commit: commit[:8], Outcome: o, Verify: ShippedVerify, ScratchDir: scratch})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if p.Commit != commit || p.Error != "" || p.Report == nil || p.Decision != o.Decide() {
				t.Fatalf("prepared commit %s error %q report %v decision %s", p.Commit, p.Error, p.Report != nil, p.Decision)
			}
			want := filepath.Join("..", "testdata", "variants", "upstream", "want", mode)
			got := map[string]string{}
			for _, f := range p.Files {
				got[f.Path] = f.Content
			}
			for _, fr := range p.Report.Files {
				path := fr.Path
				if _, ok := got[path]; ok != fr.Changed {
					t.Errorf("%s: changed %t, but its content is given: %t", path, fr.Changed, ok)
				}
				if !fr.Changed {
					continue
				}
				b, err := os.ReadFile(filepath.Join(want, filepath.Base(path)))
				if err != nil {
					t.Fatal(err)
				}
				if got[path] != string(b) {
					t.Errorf("%s: the prepared content is not the patched file", path)
				}
			}
			if p.Report.Checker == nil || p.Report.Checker.Verdict != "passed" {
				t.Errorf("checker %+v", p.Report.Checker)
			}
			if len(p.Verify) != 1 || !p.VerifyPassed() || p.Verify[0].Command[1] != patch.CheckerPath {
				t.Errorf("verify %+v", p.Verify)
			}
			if s := gitStatus(t, repo); s != "" {
				t.Errorf("the checkout changed:\n%s", s)
			}
			if ents, _ := os.ReadDir(scratch); len(ents) != 0 {
				t.Errorf("the scratch worktree was left behind: %v", ents)
			}
			file := filepath.Join(t.TempDir(), patch.PreparedFile)
			if err := p.Write(file); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			back, err := patch.ParsePrepared(b)
			if err != nil {
				t.Fatalf("ParsePrepared: %v", err)
			}
			if d := cmp.Diff(p, back); d != "" {
				t.Errorf("the JSON does not read back the same (-wrote +read):\n%s", d)
			}
			if back.Report.Markdown() != p.Report.Markdown() {
				t.Error("the report renders differently after the round trip")
			}
		})
	}
}

// A tree the patcher refuses gives a patch.Prepared with the reason and no files, and the
// verification still runs; no configured command runs nothing.
func TestPrepareRefusedAndNoVerify(t *testing.T) {
	t.Parallel()
	repo, commit := gitRepo(t, "upstream")
	gittest.Git(t, repo, "rm", "--quiet", patch.CheckerPath)
	gittest.Git(t, repo, "commit", "--quiet", "-m", "no checker")
	p, err := Prepare(context.Background(), PrepareOptions{RepoDir: repo, Commit: "HEAD", Outcome: passOutcome(t), Verify: [][]string{{"sh", "-c", "echo checked; exit 3"}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Commit == commit || p.Report != nil || len(p.Files) != 0 || !strings.Contains(p.Error, "refusing to patch") {
		t.Errorf("prepared %+v", p)
	}
	if len(p.Verify) != 1 || p.Verify[0].ExitCode != 3 || p.VerifyPassed() || !strings.Contains(p.Verify[0].Output, "checked") {
		t.Errorf("verify %+v", p.Verify)
	}
	b, _ := json.Marshal(p)
	if _, err := patch.ParsePrepared(b); err != nil {
		t.Errorf("a refused patch does not parse: %v", err)
	}

	p, err = Prepare(context.Background(), PrepareOptions{RepoDir: repo, Commit: commit, Outcome: passOutcome(t), Verify: [][]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Verify) != 0 || !p.VerifyPassed() || p.Verify == nil {
		t.Errorf("no command: verify %#v", p.Verify)
	}
	if _, err := Prepare(context.Background(), PrepareOptions{RepoDir: repo, Commit: strings.Repeat("ab", 20), Outcome: passOutcome(t)}); err == nil {
		t.Error("a commit the repository lacks was prepared")
	}
}

// patch.ParsePrepared refuses what a hostile job could write instead of a prepared patch.
func TestParsePreparedRefuses(t *testing.T) {
	t.Parallel()
	repo, commit := gitRepo(t, "upstream")
	p, err := Prepare(context.Background(), PrepareOptions{RepoDir: repo, Commit: commit, Outcome: passOutcome(t), Verify: [][]string{{"true"}}})
	if err != nil {
		t.Fatal(err)
	}
	good, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := patch.ParsePrepared(good); err != nil {
		t.Fatalf("the good one: %v", err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	files := func(m map[string]any) []any { return m["files"].([]any) }
	report := func(m map[string]any) map[string]any { return m["report"].(map[string]any) }
	cases := map[string]struct {
		data []byte
		want string
	}{
		"unknown key":   {edit(func(m map[string]any) { m["extra"] = 1 }), "unknown field"},
		"trailing data": {append(append([]byte{}, good...), []byte(" {}")...), "trailing data"},
		"invalid UTF-8": {append(append([]byte{}, good[:len(good)-1]...), []byte(",\"x\":\"\xff\"}")...), "UTF-8"},
		"too large":     {make([]byte, patch.MaxPreparedSize+1), "more than"},
		"short commit":  {edit(func(m map[string]any) { m["commit"] = commit[:8] }), "full commit SHA"},
		"other path": {edit(func(m map[string]any) {
			files(m)[0].(map[string]any)["path"] = ".github/workflows/x.yml"
		}), "not a file the patch edits"},
		"traversal": {edit(func(m map[string]any) {
			files(m)[0].(map[string]any)["path"] = "src/../" + patch.RustPath
		}), "not a file the patch edits"},
		"twice": {edit(func(m map[string]any) {
			m["files"] = append(files(m), files(m)[0])
		}), "given twice"},
		"missing content": {edit(func(m map[string]any) { m["files"] = files(m)[:1] }), "content is missing"},
		"not changed": {edit(func(m map[string]any) {
			report(m)["files"].([]any)[1].(map[string]any)["changed"] = false
		}), "does not list"},
		"decision": {edit(func(m map[string]any) { m["decision"] = "record" }), "decision"},
		"report decision": {edit(func(m map[string]any) {
			m["decision"], report(m)["decision"] = "hold", "hold"
		}), "does not follow"},
		"dry run":   {edit(func(m map[string]any) { report(m)["dry_run"] = true }), "dry run"},
		"no report": {edit(func(m map[string]any) { delete(m, "report") }), "neither"},
		"NUL":       {edit(func(m map[string]any) { m["error"] = "a\x00b" }), "NUL"},
		"big content": {edit(func(m map[string]any) {
			files(m)[0].(map[string]any)["content"] = strings.Repeat("x", patch.MaxSourceSize+1)
		}), "more than"},
		"exit code": {edit(func(m map[string]any) {
			m["verify"].([]any)[0].(map[string]any)["exit_code"] = 1000
		}), "exit code"},
		"empty command": {edit(func(m map[string]any) {
			m["verify"].([]any)[0].(map[string]any)["command"] = []any{}
		}), "empty command"},
		"verdict": {edit(func(m map[string]any) {
			report(m)["checker"].(map[string]any)["verdict"] = "maybe"
		}), "verdict"},
		"many commands": {edit(func(m map[string]any) {
			v := m["verify"].([]any)
			for len(v) <= patch.MaxPreparedCommands {
				v = append(v, v[0])
			}
			m["verify"] = v
		}), "verification results"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := patch.ParsePrepared(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to say %q", err, c.want)
			}
		})
	}
}

// Check accepts a prepared patch that is what patch.Plan makes of the commit's own files, and
// nothing else: another content, another report, a checker that rewrote a file.
func TestPreparedCheck(t *testing.T) {
	t.Parallel()
	repo, commit := gitRepo(t, "upstream")
	show := func(path string) string {
		out, err := exec.Command("git", "-C", repo, "show", commit+":"+path).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	rust, checker := show(patch.RustPath), show(patch.CheckerPath)
	for _, o := range []patch.Outcome{passOutcome(t), failOutcome(t)} {
		p, err := Prepare(context.Background(), PrepareOptions{RepoDir: repo, Commit: commit, Outcome: o, Verify: [][]string{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check(o, rust, checker); err != nil {
			t.Errorf("%s: the honest patch fails the check: %v", o.Decide(), err)
		}
		bad := p
		bad.Files = append([]patch.PatchedFile(nil), p.Files...)
		bad.Files[0].Content += "// one more line\n"
		if err := bad.Check(o, rust, checker); err == nil || !strings.Contains(err.Error(), "is not what the patch makes") {
			t.Errorf("%s: other content: %v", o.Decide(), err)
		}
		r := *p.Report
		r.EntriesAfter++
		bad = p
		bad.Report = &r
		if err := bad.Check(o, rust, checker); err == nil || !strings.Contains(err.Error(), "another patch") {
			t.Errorf("%s: another report: %v", o.Decide(), err)
		}
		if err := p.Check(o, rust, checker+"# one more line\n"); err == nil {
			t.Errorf("%s: the check passed against other files", o.Decide())
		}
	}
	if err := (patch.Prepared{Error: "refused"}).Check(passOutcome(t), rust, checker); err != nil {
		t.Errorf("a patch not applied: %v", err)
	}
}

// A checker that rewrites the test file while it runs leaves a prepared patch whose
// content is not the patch: the check refuses it.
func TestPreparedCheckCatchesAHostileChecker(t *testing.T) {
	t.Parallel()
	repo, _ := gitRepo(t, "upstream")
	path := filepath.Join(repo, filepath.FromSlash(patch.CheckerPath))
	src := readFile(t, path)
	src = strings.Replace(src, "from __future__ import annotations\n",
		"from __future__ import annotations\nopen('"+filepath.ToSlash(patch.RustPath)+"', 'a').write('// planted\\n')\n", 1)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, repo, "add", "-A")
	gittest.Git(t, repo, "commit", "--quiet", "-m", "hostile checker")
	show := func(p string) string {
		out, err := exec.Command("git", "-C", repo, "show", "HEAD:"+p).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	p, err := Prepare(context.Background(), PrepareOptions{RepoDir: repo, Commit: "HEAD", Outcome: passOutcome(t), Verify: [][]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) == 0 || !strings.Contains(p.Files[0].Content, "// planted") {
		t.Fatalf("the checker did not plant its line: the test proves nothing")
	}
	if err := p.Check(passOutcome(t), show(patch.RustPath), show(patch.CheckerPath)); err == nil {
		t.Error("a patch the checker rewrote passes the check")
	}
}

// With the host's sandbox on, the checker and the verification commands run under
// bwrap: the worktree is writable, the rest of the machine is not.
func TestPrepareInTheSandbox(t *testing.T) {
	t.Parallel()
	settings, err := sandbox.FromEnv(func(k string) string {
		if k == sandbox.EnvMode {
			return string(sandbox.Bwrap)
		}
		return os.Getenv(k)
	})
	if err != nil {
		t.Fatalf("the sandbox cannot start on this machine (bubblewrap is a test requirement): %v", err)
	}
	repo, commit := gitRepo(t, "upstream")
	outside := filepath.Join(t.TempDir(), "outside.txt")
	// The system's Python: the sandbox hides the home folder, where a user's Python
	// (pyenv's shims) may live.
	const python = "/usr/bin/python3"
	p, err := Prepare(context.Background(), PrepareOptions{RepoDir: repo, Commit: commit, Outcome: passOutcome(t), Sandbox: &settings, Python: python,
		Verify: [][]string{{"sh", "-c", "echo inside > inside.txt && cat inside.txt"}, {"sh", "-c", "echo planted > " + outside}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Report == nil || p.Report.Checker == nil || p.Report.Checker.Verdict != "passed" {
		t.Fatalf("the checker in the sandbox: %+v", p.Report.Checker)
	}
	if len(p.Verify) != 2 || !p.Verify[0].Passed() || !strings.Contains(p.Verify[0].Output, "inside") {
		t.Errorf("a write into the worktree: %+v", p.Verify)
	}
	if len(p.Verify) == 2 && p.Verify[1].Passed() {
		t.Errorf("a write outside the worktree passed: %+v", p.Verify[1])
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the sandboxed command wrote outside the worktree: %v", err)
	}
}
