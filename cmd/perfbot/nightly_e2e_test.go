package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/action"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
)

// nightlyConfig is the target's .github/perfbot.yml for the nightly: three models of
// the real 2026-09-30 CSV and a one-second idle window, so that a night takes seconds.
const nightlyConfig = `version: 1
epic: 1814
models:
  llama:
    dir: models/mlx/Meta-Llama-3.1-8B-Instruct-4bit
    model_type: llama
    weights_gib: 4.5
  qwen3:
    dir: models/mlx/Qwen3-30B-A3B-4bit
    model_type: qwen3_moe
    weights_gib: 16.0
  small:
    dir: models/mlx/Qwen3-0.6B-4bit
    model_type: qwen3
    weights_gib: 0.4
default_models: [llama]
guard: {idle_secs: 1, sample_hz: 20, max_attempts: 2, max_wait_secs: 60}
`

const (
	nightlyRepo  = "lablup/mlxcel"
	nightlyLlama = "Meta-Llama-3.1-8B-Instruct-4bit"
	// nightlyNoise is the run-to-run noise of a reading (one standard deviation), as
	// the change-point tests of bot/publish use on the same CSV.
	nightlyNoise = 0.015
	// nightlyStep is the planted step: -12 % of Llama's decode tok/s.
	nightlyStep = 0.88
	// nightlyBaselineBranch is where the publish job commits each night.
	nightlyBaselineBranch = "perfbot/rocm-baseline"
)

// nightlyModels are the models the checkout holds, named as their folders.
var nightlyModels = []string{nightlyLlama, "Qwen3-0.6B-4bit", "Qwen3-30B-A3B-4bit"}

// nightlyRig is the target repository on a local remote with its nightly history, the
// simulated gfx1151 host, and the local GitHub with the App: everything the nightly
// workflow's two jobs touch.
type nightlyRig struct {
	t     *testing.T
	dir   string
	home  string
	tg    hosttest.Target
	root  string // the fake host's /
	gh    *fakegithub.Server
	key   []byte // the App's private key, PEM
	rng   *mrand.Rand
	level map[string]float64 // each model's decode tok/s in the checkout's fake-bench.txt
	run   int64
	// measured is the commit each night measured, by night.
	measured map[int]string
	// pulls are the pull requests the landed commits were merged by, by commit.
	pulls map[string]int
}

func nightlyDate(k int) string {
	return time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, k).Format(time.DateOnly)
}

func newNightlyRig(t *testing.T) *nightlyRig {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	// perfbot for the fake host's tools: the fake bench of the culprit's profile A/B
	// writes its runs with `perfbot synth`. `go test` puts its own toolchain first on
	// the PATH of the test process.
	bin := filepath.Join(dir, "bin")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "perfbot"), ".").CombinedOutput(); err != nil {
		t.Fatalf("building perfbot: %v\n%s", err, out)
	}
	// The host's environment: the fake tools first, a private guard lock, an empty KFD
	// list under the fake root, and git without the user's or the system's config.
	root := hosttest.Root(t, dir)
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_TERMINAL_PROMPT": "0", "LANG": "C", "TMPDIR": dir, "PATH": hosttest.Path(t, bin),
		"FAKEHOST_ROCMINFO": testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"),
		guard.EnvLock:       filepath.Join(dir, "guard.lock"), guard.EnvKFDDir: "/sys/class/kfd/kfd/proc",
		guard.EnvCompilerRE: "^perfbot-test-no-such-compiler$", guard.EnvLockHeld: "",
		"FAKE_HARNESS": "", "FAKE_HARNESS_GATE": "", "FAKE_MLXLM_GATE": "", "FAKE_CARGO_BUILD": "", "FAKE_CARGO_TESTS": "",
		"FAKE_HARNESS_DATE": "", "FAKE_HARNESS_SCALE": "", "FAKE_HARNESS_SINGLE_SCALE": "",
		"GITHUB_STEP_SUMMARY": "", "GITHUB_REPOSITORY": "", "GITHUB_SERVER_URL": "", "GITHUB_TOKEN": "", "GITHUB_ACTIONS": "",
	} {
		t.Setenv(k, v)
	}

	// The models at their levels of the real 2026-09-30 CSVs.
	mlxcel, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", "rocm_strixhalo-gfx1151_2026-09-30.csv"))
	if err != nil {
		t.Fatal(err)
	}
	mlxlm, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", "pylm_strixhalo-gfx1151_2026-09-30.csv"))
	if err != nil {
		t.Fatal(err)
	}
	row := func(f *benchcsv.File, model string) benchcsv.Row {
		for _, r := range f.Rows {
			if r.Model == model && r.OK() {
				return r
			}
		}
		t.Fatalf("%s has no row of %s", f.Name, model)
		return benchcsv.Row{}
	}
	upstream, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Cargo.toml":                            "[workspace]\nmembers = [\"src/lib/mlxcel-core\"]\n",
		".gitignore":                            "/target/\n",
		".github/perfbot.yml":                   nightlyConfig,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM": string(upstream),
		"CHANGES.md":                            "# Changes\n",
	}
	r := &nightlyRig{t: t, dir: dir, home: home, root: root, rng: mrand.New(mrand.NewPCG(25, 1204)), level: map[string]float64{}, measured: map[int]string{}, pulls: map[string]int{}}
	for _, m := range nightlyModels {
		a, b := row(mlxcel, m), row(mlxlm, m)
		r.level[m] = a.DecodeTokS
		d := "models/mlx/" + m + "/"
		files[d+"config.json"] = "{}\n"
		files[d+"model.safetensors"] = "weights"
		files[d+"fake-bench.txt"] = fmt.Sprintf("mlxcel %.2f %.2f\nmlx-lm %.2f %.2f\n", a.DecodeTokS, a.PrefillTokS, b.DecodeTokS, b.PrefillTokS)
	}
	harness := filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "harness")
	for _, s := range []string{"bench_decode.sh", "bench_mlxlm.py"} {
		b, err := os.ReadFile(filepath.Join(harness, s))
		if err != nil {
			t.Fatal(err)
		}
		files["scripts/"+s] = string(b)
	}
	r.tg = hosttest.NewTarget(t, home, files)

	// The local GitHub: the App, the repository on the bare remote, the epic the
	// tracking comment goes to. The App's world lists no issues of a repository, which
	// the publish job reads its regression issues by: that one call is answered here
	// from the world's own issues, each as the world serves it.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	r.key = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	r.gh = fakegithub.New(t, fakegithub.App(1, "perfbot", &key.PublicKey))
	r.gh.AddUser(fakegithub.User{Login: "maintainer"})
	r.gh.AddRepo(&fakegithub.Repo{Owner: "lablup", Name: "mlxcel", DefaultBranch: "main", GitDir: r.tg.Bare,
		Collaborators: map[string]string{"maintainer": fakegithub.PermAdmin}})
	if _, err := r.gh.AddIssue(nightlyRepo, fakegithub.Issue{Number: 1814, Title: "ROCm: port the fused decode kernels", User: "maintainer", Body: "The epic."}); err != nil {
		t.Fatal(err)
	}
	r.gh.Expect("GET", "/repos/"+nightlyRepo+"/issues", fakegithub.Func(r.listIssues)).AnyTimes()
	return r
}

// listIssues answers GET /repos/{owner}/{repo}/issues with the world's issues in the
// state and by the creator asked, oldest first, on one page.
func (r *nightlyRig) listIssues(req fakegithub.Request) fakegithub.Response {
	state, creator := req.Query.Get("state"), req.Query.Get("creator")
	if state == "" {
		state = "open"
	}
	list := []json.RawMessage{}
	for _, is := range r.gh.Issues(nightlyRepo) {
		if state != "all" && is.State != state || creator != "" && !strings.EqualFold(is.User, creator) {
			continue
		}
		hr, err := http.NewRequest("GET", r.gh.URL()+"repos/"+nightlyRepo+"/issues/"+strconv.Itoa(is.Number), nil)
		if err != nil {
			return fakegithub.Response{Status: 500}
		}
		hr.Header.Set("Authorization", req.Header.Get("Authorization"))
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return fakegithub.Response{Status: 500}
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return fakegithub.Response{Status: 500}
		}
		list = append(list, b)
	}
	b, _ := json.Marshal(list)
	return fakegithub.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: b}
}

func (r *nightlyRig) git(dir string, args ...string) string {
	r.t.Helper()
	return hosttest.Git(r.t, r.home, dir, args...)
}

// scale is a night's noise: "model=factor ..." for the fake harness, one reading a
// model.
func (r *nightlyRig) scale() string {
	var kv []string
	for _, m := range nightlyModels {
		kv = append(kv, fmt.Sprintf("%s=%.6f", m, 1+nightlyNoise*r.rng.NormFloat64()))
	}
	return strings.Join(kv, " ")
}

// seed lays nights 0..n-1 as committed history: each night the fake harness's sweep
// at main's head with that night's noise, its CSV committed on main as the merged
// baseline pull request would, so every row names a commit of main.
func (r *nightlyRig) seed(n int) {
	t := r.t
	t.Helper()
	repo := r.tg.Repo
	rel := filepath.Join(repo, "target", "release")
	if err := os.MkdirAll(rel, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"mlxcel", "mlxcel-bench-decode"} {
		if err := os.WriteFile(filepath.Join(rel, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for k := range n {
		cmd := exec.Command("scripts/bench_decode.sh", "all")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "MODELS_DIR=models/mlx", "FAKE_HARNESS_DATE="+nightlyDate(k), "FAKE_HARNESS_SCALE="+r.scale())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the seeded night %d: %v\n%s", k, err, out)
		}
		r.git(repo, "add", "benchmarks")
		r.git(repo, "commit", "--quiet", "-m", "nightly baseline "+nightlyDate(k))
	}
	if err := os.RemoveAll(filepath.Join(repo, "target")); err != nil {
		t.Fatal(err)
	}
	r.git(repo, "push", "--quiet", "origin", "main")
}

// land lands commits on main as merged pull requests would, each squashed into one
// commit that GitHub associates with its pull request: each appends a line to
// CHANGES.md; plant[i], when set, also sets Llama's decode tok/s in its fake-bench.txt
// to that factor of its level before (a step the harness measures from that commit
// on). It returns the commits, oldest first.
func (r *nightlyRig) land(n int, plant map[int]float64) []string {
	t := r.t
	t.Helper()
	repo := r.tg.Repo
	r.git(repo, "fetch", "--quiet", "origin")
	r.git(repo, "reset", "--quiet", "--hard", "origin/main")
	var out, msgs []string
	for i := range n {
		f, err := os.OpenFile(filepath.Join(repo, "CHANGES.md"), os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "- change %d\n", len(r.git(repo, "rev-list", "HEAD"))+i)
		f.Close()
		msg := "a change that does not move the decode"
		if factor, ok := plant[i]; ok {
			p := filepath.Join(repo, "models", "mlx", nightlyLlama, "fake-bench.txt")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			old := fmt.Sprintf("mlxcel %.2f ", r.level[nightlyLlama])
			if !strings.HasPrefix(string(b), old) {
				t.Fatalf("%s does not start with %q:\n%s", p, old, b)
			}
			r.level[nightlyLlama] *= factor
			body := fmt.Sprintf("mlxcel %.2f ", r.level[nightlyLlama]) + strings.TrimPrefix(string(b), old)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			msg = fmt.Sprintf("a change that makes %s's decode %.0f %% slower", nightlyLlama, (1-factor)*100)
		}
		r.git(repo, "add", "-A")
		r.git(repo, "commit", "--quiet", "-m", msg)
		out = append(out, r.git(repo, "rev-parse", "HEAD"))
		msgs = append(msgs, msg)
	}
	r.git(repo, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	for i, sha := range out {
		num, err := r.gh.AddIssue(nightlyRepo, fakegithub.Issue{Title: msgs[i], User: "maintainer", State: "closed",
			PR: &fakegithub.Pull{Head: "change-" + sha[:8], Base: "main", MergeCommit: sha}})
		if err != nil {
			t.Fatal(err)
		}
		r.pulls[sha] = num
	}
	return out
}

// nightResult is what one night of the workflow left.
type nightResult struct {
	commit   string // the commit measured: main's head
	manifest results.Nightly
	artifact string            // the results folder the bench job handed on
	outputs  map[string]string // the publish step's
	baseline string            // the baseline commit the maintainer merged
}

// clock is the night's time for the bench job: from 03:17 of the night's date, a
// second later at every reading.
func nightClock(date string) func() time.Time {
	var mu sync.Mutex
	d, _ := time.ParseInLocation(time.DateOnly, date, time.Local)
	now := d.Add(3*time.Hour + 17*time.Minute)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

// night runs night k of the nightly workflow at main's head: the bench job on the
// simulated GPU host (a fresh checkout of the commit, runner/job's Bench as the
// Action's bench entry calls it, at the night's date), its results handed on as the
// artifact, then the publish job through the Action's entry with the App's key against
// the local GitHub, cloning the repository from the remote. Then a maintainer merges
// the baseline pull request, so the night joins the history of the next.
func (r *nightlyRig) night(ctx context.Context, k int) nightResult {
	t := r.t
	t.Helper()
	start := time.Now()
	date := nightlyDate(k)
	sha := r.git(r.tg.Bare, "rev-parse", "refs/heads/main")
	r.measured[k] = sha
	// The harnesses date their files by the host's clock: the night's date here. The
	// night's noise: the sweep's readings and the re-measures'.
	t.Setenv("FAKE_HARNESS_DATE", date)
	t.Setenv("FAKE_HARNESS_SCALE", r.scale())
	t.Setenv("FAKE_HARNESS_SINGLE_SCALE", r.scale())
	r.run++
	runner := filepath.Join(r.dir, fmt.Sprintf("night-%02d", k))

	// The bench job: actions/checkout of the commit, without credentials.
	ws := filepath.Join(runner, "gpu", "_work", "mlxcel")
	tmp := filepath.Join(runner, "gpu", "_temp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	r.git(r.dir, "clone", "--quiet", "--no-checkout", r.tg.Bare, ws)
	r.git(ws, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", sha)
	cfg, err := config.LoadRepo(filepath.Join(ws, ".github", "perfbot.yml"), ws, true)
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(r.root, os.Getenv("PATH"), os.Environ())
	g, err := job.GuardFromConfig(cfg, h, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	// The config's guard with the window the host jobs' tests use: one clean sample
	// (the config cannot say less than a second, and a night runs three guarded
	// commands or more).
	g.Idle, g.SampleHz = 0, 50
	var progress strings.Builder
	rep, err := job.Bench(ctx, job.BenchOptions{Host: h, RepoDir: ws, Config: cfg, OutDir: filepath.Join(tmp, "perfbot"), Guard: g,
		Rules: baseline.DefaultRules(), Progress: &progress, Now: nightClock(date)})
	if err != nil || len(rep.HarnessProblems()) > 0 || len(rep.Failed()) > 0 {
		t.Fatalf("night %d (%s): the bench: %v; problems %v; failed %v\n%s", k, date, err, rep.HarnessProblems(), rep.Failed(), progress.String())
	}
	if rep.Manifest.Date != date || rep.Manifest.Commit != sha || rep.Manifest.State != results.SessionComplete {
		t.Fatalf("night %d: the manifest is of %s at %s (%s), want %s at %s", k, rep.Manifest.Date, rep.Manifest.Commit, rep.Manifest.State, date, sha)
	}
	// actions/upload-artifact of the results folder; the GPU job's folders go.
	artifact := filepath.Join(runner, "artifact")
	if err := os.CopyFS(artifact, os.DirFS(rep.Folder)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(runner, "gpu")); err != nil {
		t.Fatal(err)
	}

	// The publish job: no checkout, the artifact downloaded under RUNNER_TEMP.
	pws := filepath.Join(runner, "publish", "_work", "mlxcel")
	ptmp := filepath.Join(runner, "publish", "_temp")
	download := filepath.Join(ptmp, "perfbot-results")
	if err := os.MkdirAll(pws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(download, os.DirFS(artifact)); err != nil {
		t.Fatal(err)
	}
	benchTook := time.Since(start)
	out := r.publish(ctx, filepath.Join(runner, "publish"), pws, ptmp, sha, download)
	if out["verdict"] != action.VerdictSuccess {
		t.Fatalf("night %d: the publish step's outputs %v", k, out)
	}

	// The maintainer merges the baseline pull request: main moves to its commit, which
	// is the measured commit plus tonight's files.
	head := r.git(r.tg.Bare, "rev-parse", "refs/heads/"+nightlyBaselineBranch)
	if parent := r.git(r.tg.Bare, "rev-parse", head+"^"); parent != sha {
		t.Fatalf("night %d: the baseline commit's parent is %s, want the measured %s", k, parent, sha)
	}
	r.git(r.tg.Bare, "update-ref", "refs/heads/main", head, sha)
	if c := rep.Manifest.Comparison; c != nil {
		for _, m := range c.Models {
			if m.Model == nightlyLlama {
				t.Logf("night %d (%s) at %s in %s (bench %s): %s %s; issues %v", k, date, sha[:8], time.Since(start).Round(100*time.Millisecond), benchTook.Round(100*time.Millisecond), m.Verdict, m.Text, r.regressions())
			}
		}
	}
	return nightResult{commit: sha, manifest: rep.Manifest, artifact: artifact, outputs: out, baseline: head}
}

// publish runs the publish step through the Action's entry, as Actions runs it, and
// returns its outputs.
func (r *nightlyRig) publish(ctx context.Context, runner, ws, tmp, sha, download string) map[string]string {
	t := r.t
	t.Helper()
	event, _ := json.Marshal(map[string]any{
		"inputs": map[string]any{}, "ref": "refs/heads/main", "workflow": ".github/workflows/perfbot-nightly.yml",
		"repository":   map[string]any{"full_name": nightlyRepo, "name": "mlxcel", "owner": map[string]any{"login": "lablup"}, "default_branch": "main"},
		"sender":       map[string]any{"login": "maintainer", "type": "User"},
		"installation": map[string]any{"id": fakegithub.InstallationID},
	})
	eventPath := filepath.Join(runner, "event.json")
	if err := os.WriteFile(eventPath, event, 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range []string{"output", "summary", "env", "path", "state"} {
		files[f] = filepath.Join(runner, f)
		if err := os.WriteFile(files[f], nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_EVENT_NAME": "workflow_dispatch", "GITHUB_EVENT_PATH": eventPath,
		"GITHUB_REPOSITORY": nightlyRepo, "GITHUB_WORKSPACE": ws, "RUNNER_TEMP": tmp, "GITHUB_SHA": sha,
		"GITHUB_REF": "refs/heads/main", "GITHUB_API_URL": strings.TrimSuffix(r.gh.URL(), "/"), "GITHUB_SERVER_URL": "http://github.invalid",
		"GITHUB_RUN_ID": strconv.FormatInt(r.run, 10), "GITHUB_WORKFLOW_REF": nightlyRepo + "/.github/workflows/perfbot-nightly.yml@refs/heads/main",
		"GITHUB_OUTPUT": files["output"], "GITHUB_STEP_SUMMARY": files["summary"], "GITHUB_ENV": files["env"],
		"GITHUB_PATH": files["path"], "GITHUB_STATE": files["state"], action.EnvRepoURL: r.tg.Bare,
		"INPUT_JOB": "publish", "INPUT_RESULTS": download, "INPUT_REF": sha,
		"INPUT_APP-ID": "1", "INPUT_APP-PRIVATE-KEY": string(r.key),
	}
	var log strings.Builder
	if err := action.Run(ctx, action.Options{Stdout: &log, Getenv: func(k string) string { return env[k] }}); err != nil {
		// The step log without the masks, which spell out the App's key.
		var lines []string
		for _, l := range strings.Split(log.String(), "\n") {
			if !strings.HasPrefix(l, "::add-mask::") {
				lines = append(lines, l)
			}
		}
		t.Fatalf("the publish step: %v\n%s", err, strings.Join(lines, "\n"))
	}
	out, err := readNightlyOutputs(files["output"])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readNightlyOutputs reads a GITHUB_OUTPUT file: name=value lines and name<<DELIM
// blocks.
func readNightlyOutputs(p string) (map[string]string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		if name, val, ok := strings.Cut(line, "="); ok {
			out[name] = val
		}
	}
	return out, nil
}

// regressionIssue is one regression issue the App opened on the local GitHub.
type regressionIssue struct {
	number      int
	model, date string // from its marker: the change's first night
	state, body string
}

var changeMarker = regexp.MustCompile(`<!-- perfbot:regression (\S+) (\S+) (\d{4}-\d{2}-\d{2}) -->`)

// regressions are the App's regression issues, oldest first.
func (r *nightlyRig) regressions() []regressionIssue {
	var out []regressionIssue
	for _, is := range r.gh.Issues(nightlyRepo) {
		if is.PR != nil || is.User != "perfbot[bot]" || !strings.Contains(is.Body, report.RegressionPrefix) {
			continue
		}
		ri := regressionIssue{number: is.Number, state: is.State, body: is.Body}
		if g := changeMarker.FindStringSubmatch(is.Body); g != nil {
			ri.model, ri.date = g[2], g[3]
		}
		out = append(out, ri)
	}
	return out
}

// row is the value of a row of the issue's table.
func (ri regressionIssue) row(label string) string {
	m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(label) + ` \| (.*) \|$`).FindStringSubmatch(ri.body)
	if m == nil {
		return ""
	}
	return m[1]
}

func (ri regressionIssue) String() string {
	return fmt.Sprintf("#%d %s from %s (%s)", ri.number, ri.model, ri.date, ri.state)
}

// commitOf is the commit a row of the issue names, resolved on the remote.
func (r *nightlyRig) commitOf(cell string) string {
	r.t.Helper()
	sha := strings.Trim(strings.TrimSpace(cell), "`")
	if !regexp.MustCompile(`^[0-9a-f]{7,40}$`).MatchString(sha) {
		r.t.Fatalf("%q does not name a commit", cell)
	}
	return r.git(r.tg.Bare, "rev-parse", "--verify", sha+"^{commit}")
}

// holds says the range good..bad (good excluded) holds commit.
func (r *nightlyRig) holds(good, bad, commit string) bool {
	r.t.Helper()
	return good != commit && r.git(r.tg.Bare, "merge-base", good, commit) == good && r.git(r.tg.Bare, "merge-base", commit, bad) == commit
}

// checkRange checks that the issue's last good and first bad commits are commits the
// nightly measured and that their range holds the planted one.
func (r *nightlyRig) checkRange(t *testing.T, ri regressionIssue, planted string) (good, bad string) {
	t.Helper()
	good, bad = r.commitOf(ri.row("last good commit")), r.commitOf(ri.row("first bad commit"))
	measured := func(c string) bool {
		for _, m := range r.measured {
			if m == c {
				return true
			}
		}
		return false
	}
	if !measured(good) || !measured(bad) || !r.holds(good, bad, planted) {
		t.Errorf("issue %s: last good %s, first bad %s; want two measured commits whose range holds the planted %s:\n%s", ri, good[:8], bad[:8], planted[:8], ri.body)
	}
	return good, bad
}

// startedOn checks that the nights the issue says the change may have started on
// ("A" or "A to B") hold date.
func startedOn(t *testing.T, ri regressionIssue, date string) {
	t.Helper()
	cell := ri.row("nights it may have started on")
	from, to, ok := strings.Cut(cell, " to ")
	if !ok {
		to = from
	}
	if !(from <= date && date <= to) {
		t.Errorf("issue %s: the change may have started on %q, which leaves out %s:\n%s", ri, cell, date, ri.body)
	}
}

// The nightly on the fake host, night after night, as the nightly workflow runs it:
// twenty nights of committed history made from the real 2026-09-30 CSVs with 1.5 %
// noise, then real nights (the bench job on the simulated gfx1151 host, the publish job
// with the App's key against the local GitHub, the maintainer merging the baseline pull
// request). Four commits land between two nights, the third making Llama's decode
// 12 % slower: the night after opens exactly one regression issue, for Llama,
// confirmed by that night's interleaved A/B of the last good commit against tonight's,
// bisected on the host to the planted commit, which the issue and the bisection's
// comment name with its pull request (and the culprit's profile against its parent);
// ten more nights at the new level open nothing new, keep that issue and re-measure
// nothing; a second -12 % step in Llama, planted in the second of three commits, opens
// a second issue on its first night, confirmed by that night's A/B and bisected to the
// planted commit in the same way.
func TestNightlyEndToEnd(t *testing.T) {
	// Bounded by the test's own deadline only: on a loaded machine the nights take
	// several times as long as alone.
	ctx := t.Context()
	r := newNightlyRig(t)
	const seeded = 20
	r.seed(seeded)

	// Two real nights at the level of the history: nothing to report.
	k := seeded
	for ; k < seeded+2; k++ {
		r.land(1, nil)
		r.night(ctx, k)
		if regs := r.regressions(); len(regs) != 0 {
			t.Fatalf("night %d (%s), before any step: regression issues %v", k, nightlyDate(k), regs)
		}
	}
	lastGood := r.measured[k-1]

	// The first step: four commits land, the third is the culprit.
	landed := r.land(4, map[int]float64{2: nightlyStep})
	planted := landed[2]
	stepNight := k
	first := r.night(ctx, k)
	if first.commit != landed[3] {
		t.Fatalf("the night after the step measured %s, want the last landed commit %s", first.commit, landed[3])
	}
	regs := r.regressions()
	if len(regs) != 1 || regs[0].model != nightlyLlama || regs[0].date != nightlyDate(stepNight) || regs[0].state != "open" {
		t.Fatalf("the night after the step (%s): regression issues %v, want one open issue of %s from that night", nightlyDate(stepNight), regs, nightlyLlama)
	}
	issue := regs[0]
	r.checkConfirmedByAB(t, first, stepNight, lastGood, planted)
	if got := issue.row("how it was found"); !strings.Contains(got, "the re-measure of "+nightlyLlama+" alone") || !strings.Contains(got, nightlyDate(stepNight)) {
		t.Errorf("the issue says it was found by %q, want by the re-measure of %s alone on %s:\n%s", got, nightlyLlama, nightlyDate(stepNight), issue.body)
	}
	// Confirmed by the A/B of the last good commit against tonight's, and bisected to
	// the planted commit, named with its pull request: in the issue and in the
	// bisection's comment on it.
	if got, want := issue.row("confirmation"), "A/B of "+lastGood[:8]+" ("; !strings.HasPrefix(got, want) || !strings.Contains(got, " against "+first.commit[:8]+" (") || !strings.Contains(got, "slower") {
		t.Errorf("the issue's confirmation %q, want the A/B of %s against %s, slower:\n%s", got, lastGood[:8], first.commit[:8], issue.body)
	}
	pull := "#" + strconv.Itoa(r.pulls[planted])
	if got := issue.row("bisection"); !strings.Contains(got, planted[:8]) || !strings.Contains(got, "pull request "+pull) {
		t.Errorf("the issue's bisection %q does not name the planted %s and its pull request %s:\n%s", got, planted[:8], pull, issue.body)
	}
	r.checkBisectComment(t, issue, planted, pull)
	startedOn(t, issue, nightlyDate(stepNight))
	r.checkRange(t, issue, planted)
	if !strings.Contains(issue.row("state"), "open") {
		t.Errorf("the issue's state row %q:\n%s", issue.row("state"), issue.body)
	}

	// Ten more nights at the new level, a commit landing before each: the same issue,
	// open, and nothing new.
	for k = stepNight + 1; k <= stepNight+10; k++ {
		r.land(1, nil)
		n := r.night(ctx, k)
		// The step the first night confirmed cuts Llama's history: no night after it
		// suspects Llama again, so none spends the GPU on another A/B of it. (Another
		// model's odd night may be suspected; its A/B does not confirm it.)
		for _, rm := range n.manifest.Remeasures {
			if rm.Model == nightlyLlama || rm.Verdict == baseline.Regression || rm.Verdict == baseline.Improvement {
				t.Errorf("night %d (%s), %d nights after the step: re-measure %+v, want none of %s and none confirmed", k, nightlyDate(k), k-stepNight, rm, nightlyLlama)
			}
		}
		if len(n.manifest.Bisects) != 0 {
			t.Errorf("night %d (%s), %d nights after the step: bisections %+v, want none", k, nightlyDate(k), k-stepNight, n.manifest.Bisects)
		}
		regs := r.regressions()
		if len(regs) != 1 || regs[0].number != issue.number || regs[0].state != "open" {
			t.Fatalf("night %d (%s), %d nights after the step: regression issues %v, want %s alone, open", k, nightlyDate(k), k-stepNight, regs, issue)
		}
	}
	if latest := r.regressions()[0]; !strings.Contains(latest.body, "Latest night, "+nightlyDate(k-1)) {
		t.Errorf("the issue was not edited on the last night %s:\n%s", nightlyDate(k-1), latest.body)
	} else if latest.row("bisection") != issue.row("bisection") || latest.row("confirmation") != issue.row("confirmation") {
		t.Errorf("ten nights later the issue's confirmation %q and bisection %q, want them kept: %q, %q", latest.row("confirmation"), latest.row("bisection"), issue.row("confirmation"), issue.row("bisection"))
	}
	r.checkBisectComment(t, issue, planted, pull)

	// The second step in the same model: three commits land, the second is the
	// culprit. The bench job judges Llama against its current segment (cut at the
	// first step, which that night's manifest confirmed), so the first night after the
	// second step suspects it, confirms it by the A/B and bisects it: a second issue,
	// the first one still open.
	lastGood2 := r.measured[k-1]
	planted2 := r.land(3, map[int]float64{1: nightlyStep})[1]
	second := k
	n2 := r.night(ctx, k)
	regs = r.regressions()
	if len(regs) != 2 || regs[0].number != issue.number || regs[0].state != "open" || regs[1].model != nightlyLlama || regs[1].state != "open" || regs[1].date != nightlyDate(second) {
		t.Fatalf("the night after the second step (%s): regression issues %v, want %s still open and a second open issue of %s from that night", nightlyDate(second), regs, issue, nightlyLlama)
	}
	again := regs[1]
	r.checkConfirmedByAB(t, n2, second, lastGood2, planted2)
	if got := again.row("confirmation"); !strings.HasPrefix(got, "A/B of "+lastGood2[:8]+" (") || !strings.Contains(got, " against "+n2.commit[:8]+" (") {
		t.Errorf("the second issue's confirmation %q, want the A/B of %s against %s:\n%s", got, lastGood2[:8], n2.commit[:8], again.body)
	}
	pull2 := "#" + strconv.Itoa(r.pulls[planted2])
	if got := again.row("bisection"); !strings.Contains(got, planted2[:8]) || !strings.Contains(got, "pull request "+pull2) {
		t.Errorf("the second issue's bisection %q does not name the planted %s and its pull request %s:\n%s", got, planted2[:8], pull2, again.body)
	}
	r.checkBisectComment(t, again, planted2, pull2)
	startedOn(t, again, nightlyDate(second))
	r.checkRange(t, again, planted2)
	t.Logf("the first step: issue %s; the second: issue %s, each on its first night", issue, again)
}

// checkConfirmedByAB checks the step night's results: the comparison suspected Llama
// alone; its re-measure was the interleaved A/B of the last good commit (A) against
// tonight's (B), which found B slower; the confirmed regression was bisected over the
// commits between them to the planted commit; and the culprit was profiled against its
// parent.
func (r *nightlyRig) checkConfirmedByAB(t *testing.T, n nightResult, k int, lastGood, planted string) {
	t.Helper()
	c := n.manifest.Comparison
	if c == nil {
		t.Fatalf("night %d has no comparison", k)
	}
	for _, m := range c.Models {
		want := baseline.NoChange
		if m.Model == nightlyLlama {
			want = baseline.Regression
		}
		if m.Verdict != want {
			t.Errorf("night %d: %s's verdict %s, want %s: %s", k, m.Model, m.Verdict, want, m.Text)
		}
	}
	rms := n.manifest.Remeasures
	if len(rms) != 1 || rms[0].Model != nightlyLlama || rms[0].Verdict != baseline.Regression || rms[0].Confirm != results.ConfirmDirPrefix+nightlyLlama {
		t.Fatalf("night %d: re-measures %+v, want %s's alone, a regression confirmed by its A/B in %s", k, rms, nightlyLlama, results.ConfirmDirPrefix+nightlyLlama)
	}
	ab, err := results.ReadNightlyConfirm(n.artifact, rms[0])
	if err != nil {
		t.Fatalf("night %d: the A/B: %v", k, err)
	}
	if ab.Kind != results.CompareBench || ab.ShaA != lastGood || ab.ShaB != n.commit || len(ab.Models) != 1 {
		t.Fatalf("night %d: the A/B is %s of %s against %s over %d model(s), want bench of the last good %s against tonight's %s, one model", k, ab.Kind, ab.ShaA, ab.ShaB, len(ab.Models), lastGood, n.commit)
	}
	if m := ab.Models[0]; !m.Done || len(m.Results) == 0 || m.Results[0].Result.Verdict != abstat.Slower || m.Results[0].Result.ChangePct > -8 {
		t.Errorf("night %d: the A/B of %s: %+v, want B slower by about 12 %%", k, m.Model, m)
	}
	bs := n.manifest.Bisects
	if len(bs) != 1 || bs[0].Model != nightlyLlama || bs[0].Good != lastGood || bs[0].Bad != n.commit || bs[0].Dir != results.BisectDirPrefix+nightlyLlama {
		t.Fatalf("night %d: bisections %+v, want %s's over %s..%s", k, bs, nightlyLlama, lastGood[:8], n.commit[:8])
	}
	b, err := results.ReadNightBisect(n.artifact, bs[0])
	if err != nil {
		t.Fatalf("night %d: the bisection: %v", k, err)
	}
	parent := r.git(r.tg.Bare, "rev-parse", planted+"^")
	if o := b.Outcome; b.State != results.SessionComplete || o == nil || o.Outcome != results.BisectFound || o.FirstBad != planted || o.LastGood != parent {
		t.Fatalf("night %d: the bisection %s ended %+v, want the planted %s found, its parent %s the last good", k, b.State, b.Outcome, planted, parent)
	}
	culprit, err := results.ReadCulprit(filepath.Join(n.artifact, bs[0].Dir), b)
	if err != nil {
		t.Fatalf("night %d: the culprit's profile A/B: %v (%s)", k, err, b.CulpritReason)
	}
	if culprit.Kind != results.CompareProfile || culprit.ShaA != parent || culprit.ShaB != planted {
		t.Errorf("night %d: the culprit's A/B is %s of %s against %s, want a profile A/B of %s against its parent %s", k, culprit.Kind, culprit.ShaA, culprit.ShaB, planted, parent)
	}
}

// checkBisectComment checks the bisection's comment on the regression issue: one, by
// the App, naming the planted commit and its pull request, with the culprit's profile.
func (r *nightlyRig) checkBisectComment(t *testing.T, ri regressionIssue, planted, pull string) {
	t.Helper()
	var found []string
	for _, c := range r.gh.Comments(ri.number) {
		if c.User == "perfbot[bot]" && strings.Contains(c.Body, "## Bisection of "+nightlyLlama) {
			found = append(found, c.Body)
		}
	}
	if len(found) != 1 {
		t.Fatalf("issue %s has %d bisection comments, want one:\n%s", ri, len(found), strings.Join(found, "\n---\n"))
	}
	cm := regressionIssue{body: found[0]}
	if got := cm.row("first bad commit"); !strings.Contains(got, planted[:8]) {
		t.Errorf("the bisection comment's first bad commit %q, want the planted %s:\n%s", got, planted[:8], cm.body)
	}
	if got := cm.row("pull request"); !strings.Contains(got, pull) {
		t.Errorf("the bisection comment's pull request %q, want %s:\n%s", got, pull, cm.body)
	}
	if !strings.Contains(cm.body, "### The culprit's profile: the first bad commit against its parent") {
		t.Errorf("the bisection comment has no profile of the culprit:\n%s", cm.body)
	}
}
