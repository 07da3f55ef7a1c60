package gitpub

import (
	"strings"
	"testing"
	"time"
)

func TestCheckPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		bad  string // "" when the path is fine
	}{
		{"docs/benchmark_results/rocm-decode-profile-gfx1151-2026-09-30.md", ""},
		{"benchmarks/rocm_profiles/gfx1151_929c80ab/guard.log", ""},
		{".github/perfbot.yml", ""},
		{"a/.gitignore", ""},
		{"dir.git/x", ""},
		{"weird name (1).md", ""},
		{"", "empty path"},
		{"/abs", "absolute"},
		{"a/../b", "leaves the repository"},
		{"..", "leaves the repository"},
		{".git", "inside .git"},
		{"x/.Git/config", "inside .git"},
		{"a//b", "not clean"},
		{"a/./b", "not clean"},
		{".", "not clean"},
		{"a/", "not clean"},
		{`a\b`, "backslash"},
		{"a\x00b", "NUL"},
		{"a\nb", "control character"},
	}
	for _, tc := range tests {
		err := checkPath(tc.path)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("checkPath(%q) = %v, want ok", tc.path, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("checkPath(%q) = %v, want an error saying %q", tc.path, err, tc.bad)
		}
	}
}

func TestCheckBranch(t *testing.T) {
	t.Parallel()
	allowed := []string{"perfbot/rocm-profile", "perfbot/rocm-baseline", "main"}
	tests := []struct {
		branch, def string
		bad         string
	}{
		{"perfbot/rocm-profile", "main", ""},
		{"perfbot/rocm-baseline", "develop", ""},
		{"main", "develop", "default branch name"},
		{"master", "", "default branch name"},
		{"perfbot/rocm-profile", "perfbot/rocm-profile", "the repository's default branch"},
		{"perfbot/other", "main", "not one of the configured bot branches"},
		// The branch of a request under a configured one (BranchName), and no other.
		{"perfbot/rocm-profile-pr-1900", "main", ""},
		{"perfbot/rocm-baseline-issue-1814", "main", ""},
		{"perfbot/rocm-profile-mywork", "main", "not one of the configured bot branches"},
		{"perfbot/rocm-profile/pr-1900", "main", "not one of the configured bot branches"},
		{"", "main", "no branch was given"},
		{"refs/heads/perfbot/rocm-profile", "main", "without refs/heads/"},
		{"HEAD", "main", "reserved"},
		{"perfbot/a b", "main", "space"},
		{"perfbot/a~1", "main", "~"},
		{"perfbot/a..b", "main", `".."`},
		{"perfbot/x@{1}", "main", `"@{"`},
		{"perfbot//x", "main", `"//"`},
		{"perfbot/x/", "main", "ends with a slash"},
		{"perfbot/x.", "main", "ends with a dot"},
		{"perfbot/.x", "main", "starts with a dot"},
		{"perfbot/x.lock", "main", ".lock"},
		{"-x", "main", "dash"},
	}
	for _, tc := range tests {
		err := checkBranch(tc.branch, allowed, tc.def)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("checkBranch(%q) = %v, want ok", tc.branch, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("checkBranch(%q, default %q) = %v, want an error saying %q", tc.branch, tc.def, err, tc.bad)
		}
	}
	if err := checkBranch("perfbot/rocm-profile", nil, "main"); err == nil {
		t.Error("a branch was accepted with no configured bot branches")
	}
}

func TestIsTrace(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"benchmarks/rocm_profiles/g/Qwen3-30B-A3B-4bit_greedy_kernel_trace.csv": true,
		"out_kernel_trace.csv":               true,
		"x/run_memory_copy_trace.csv":        true,
		"x/RUN_KERNEL_TRACE.CSV":             true,
		"host/4242_results.db":               true,
		"x/run_kernel_stats.csv":             false,
		"x/run_decode_kernels.csv":           false,
		"docs/trace.csv.md":                  false,
		"benchmarks/rocm_profiles/guard.log": false,
	} {
		if got := isTrace(p); got != want {
			t.Errorf("isTrace(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestGitDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Unix(0, 0).UTC(), "0 +0000"},
		{time.Date(2026, 9, 30, 21, 4, 5, 0, time.FixedZone("", 2*3600)), "1790795045 +0200"},
		{time.Date(2026, 9, 30, 12, 0, 0, 0, time.FixedZone("", -(9*3600+30*60))), "1790803800 -0930"},
		{time.Date(2026, 9, 30, 12, 0, 0, 999, time.UTC), "1790769600 +0000"},
	}
	for _, tc := range tests {
		if got := gitDate(tc.in); got != tc.want {
			t.Errorf("gitDate(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPushStatus(t *testing.T) {
	t.Parallel()
	const ref = "refs/heads/perfbot/rocm-profile"
	tests := []struct {
		out        string
		flag, race string
	}{
		{"To /r.git\n*\tabc:" + ref + "\t[new branch]\nDone\n", "*", ""},
		{"To /r.git\n=\tabc:" + ref + "\t[up to date]\nDone\n", "=", ""},
		{"To /r.git\n!\tabc:" + ref + "\t[rejected] (stale info)\nDone\n", "!", "race"},
		{"To /r.git\n!\tabc:" + ref + "\t[remote rejected] (cannot lock ref '" + ref + "': is at 1 but expected 2)\nDone\n", "!", "race"},
		{"To /r.git\n!\tabc:" + ref + "\t[remote rejected] (pre-receive hook declined)\nDone\n", "!", ""},
		{"To /r.git\n*\tabc:refs/heads/other\t[new branch]\nDone\n", "", ""},
		{"", "", ""},
	}
	for _, tc := range tests {
		flag, summary := pushStatus(tc.out, ref)
		if flag != tc.flag {
			t.Errorf("pushStatus(%q) flag = %q, want %q", tc.out, flag, tc.flag)
		}
		if got := isRace(summary); got != (tc.race != "") {
			t.Errorf("isRace(%q) = %v", summary, got)
		}
	}
}

func TestHint(t *testing.T) {
	t.Parallel()
	for stderr, want := range map[string]string{
		"fatal: could not read Username for 'https://github.com': terminal prompts disabled": "refused the credentials",
		"remote: Permission to lablup/mlxcel.git denied to perfbot[bot].":                    "refused the credentials",
		"fatal: unable to access 'https://x/': Could not resolve host: x":                    "could not be reached",
		"error: pathspec 'x' did not match":                                                  "",
	} {
		if got := hint(stderr); (want == "" && got != "") || !strings.Contains(got, want) {
			t.Errorf("hint(%q) = %q, want it to say %q", stderr, got, want)
		}
	}
}

func TestAuthEnvScopesAndResets(t *testing.T) {
	t.Parallel()
	env := authEnv("tok", []string{"https://github.com/o/r.git"})
	want := []string{
		"GIT_CONFIG_KEY_0=http.https://github.com/o/r.git.extraheader", "GIT_CONFIG_VALUE_0=",
		"GIT_CONFIG_KEY_1=http.https://github.com/o/r.git.extraheader", "GIT_CONFIG_VALUE_1=AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46dG9r",
		"GIT_CONFIG_COUNT=2",
	}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Fatalf("authEnv =\n%s\nwant\n%s", strings.Join(env, "\n"), strings.Join(want, "\n"))
	}
}

func TestRefusedErrorListsEveryReason(t *testing.T) {
	t.Parallel()
	c := Change{Base: "abc", Branch: "main", Files: map[string][]byte{"/x": nil, "a/b_kernel_trace.csv": nil}}
	err := validateChange(c, []string{"perfbot/rocm-profile"}, "main", DefaultMaxFileSize)
	re, ok := err.(*RefusedError)
	if !ok {
		t.Fatalf("err = %v, want a RefusedError", err)
	}
	// base, branch, message, identity, date, absolute path, trace
	if len(re.Reasons) != 7 {
		t.Fatalf("reasons = %d, want 7:\n%v", len(re.Reasons), err)
	}
}
