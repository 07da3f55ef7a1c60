package main

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/demo"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/portdiff"
	"github.com/lablup/perfbot/runner/results"
)

// The change planted in the pull request's head: the single-pass attention kernel made
// twice as fast, the rope kernels removed, a fused rope kernel added.
const (
	plantedFaster  = "kernel_sdpav_1pass"
	plantedRemoved = "rope_single_freqs_1d"
	plantedAdded   = "mlx_fused_rope_append_kernel"
	plantedChange  = "faster " + plantedFaster + " 2\nremoved " + plantedRemoved + "\nadded " + plantedAdded + " rope 1200\n"
)

// `/profile rocm compare` from the comment to the pull request comment, the demo's
// way: the local GitHub and `perfbot serve` accept the command on #1900 and dispatch
// it with A the merge base (main's head) and B the pull request's head, which plants
// a known change; the GPU job runs the profile compare on the simulated gfx1151 host
// through the Action's entry; the publish job takes the artifact through intake and
// publishes it with the App's key. The port-impact difference finds exactly the
// planted kernels (one twice as fast, the removed ones vanished, the added one
// appeared) and the units they belong to, and the compare comment on #1900 shows them.
func TestProfileCompareEndToEnd(t *testing.T) {
	bin := buildPerfbot(t)
	// The demo sets these in the process's environment, as a runner's would be: put
	// them back afterwards.
	for _, k := range []string{"PATH", "FAKEHOST_ROCMINFO", guard.EnvLock, guard.EnvKFDDir, guard.EnvCompilerRE,
		"GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_TERMINAL_PROMPT"} {
		t.Setenv(k, os.Getenv(k))
	}
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var log strings.Builder
	res, err := demo.Run(ctx, demo.Options{Out: out, Keep: true, Stdout: &log, Perfbot: bin,
		Command: "/profile rocm compare models=llama", Change: plantedChange})
	if err != nil {
		t.Fatalf("the compare flow: %v\n%s", err, log.String())
	}
	for _, want := range []string{"step profile: verdict complete", "step tests: skipped", "step patch: skipped",
		"step publish: success", "finished: reactions eyes, rocket"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the flow's log lacks %q:\n%s", want, log.String())
		}
	}

	// The compare folder the GPU job handed on: A main's head, B the pull request's.
	folder := res.Files["results folder"]
	c, err := results.ReadCompareFolder(folder)
	if err != nil {
		t.Fatalf("the compare folder %s: %v\n%s", folder, err, log.String())
	}
	pull := readText(t, filepath.Join(out, "github", "pull-1900.md"))
	bare := filepath.Join(out, "work", "remote", "mlxcel.git")
	gitRev := func(rev string) string {
		t.Helper()
		b, err := exec.Command("git", "--git-dir", bare, "rev-parse", "--verify", rev).Output()
		if err != nil {
			t.Fatalf("git rev-parse %s: %v", rev, err)
		}
		return strings.TrimSpace(string(b))
	}
	mainHead, prHead := gitRev("main"), gitRev("rocm-ssm-update-kernel")
	if c.Kind != results.CompareProfile || c.State != results.SessionComplete || c.ShaA != mainHead || c.ShaB != prHead ||
		filepath.Base(folder) != "gfx1151_"+c.ShaA[:8]+"_"+c.ShaB[:8] || len(c.Diffs) != 1 {
		t.Fatalf("the compare %+v in %s; want A main's head %s (the merge base), B the pull request's head %s", c, folder, mainHead, prHead)
	}
	run := c.Diffs[0].Model
	if run != "Meta-Llama-3.1-8B-Instruct-4bit_greedy" {
		t.Errorf("the compared run is %s", run)
	}
	m, _ := c.Model(run)
	if len(m.Results) != 1 || m.Results[0].Verdict != abstat.TooFew || m.Results[0].ChangePct <= 0 {
		t.Errorf("the decode tok/s of one plain run a side: %+v", m)
	}

	// The port impact: exactly the planted kernels, and their units.
	var d portdiff.Diff
	if err := json.Unmarshal([]byte(readText(t, filepath.Join(folder, c.Diffs[0].JSON))), &d); err != nil {
		t.Fatal(err)
	}
	if a := kernelNames(d.Appeared); !slices.Equal(a, []string{plantedAdded}) {
		t.Errorf("appeared %v, want %s alone", a, plantedAdded)
	}
	vanished := kernelNames(d.Vanished)
	if len(vanished) == 0 || slices.ContainsFunc(vanished, func(n string) bool { return !strings.Contains(n, plantedRemoved) }) {
		t.Errorf("vanished %v, want the %s kernels alone", vanished, plantedRemoved)
	}
	plantedUnits := map[string]bool{}
	faster := 0
	for _, k := range d.Kernels {
		r := k.MsPerToken.B / k.MsPerToken.A
		if strings.Contains(k.Kernel, plantedFaster) {
			faster++
			if r < 0.45 || r > 0.55 {
				t.Errorf("%s: %.3f of its time in A, want about half", k.Kernel, r)
			}
			for _, u := range k.Units {
				plantedUnits[u] = true
			}
		} else if r < 0.8 || r > 1.25 {
			t.Errorf("%s changed to %.3f of its time; only the planted kernels should", portdiff.Short(k.Kernel), r)
		}
	}
	for _, k := range d.Vanished {
		for _, u := range k.Units {
			plantedUnits[u] = true
		}
	}
	if faster == 0 || len(plantedUnits) == 0 {
		t.Fatalf("no %s kernel in both profiles, or no unit of the planted kernels: %+v", plantedFaster, d.Kernels)
	}
	// The units whose GPU time moved beyond the noise are exactly those of the planted
	// kernels, and B recovered time on each.
	moved := map[string]bool{}
	for _, u := range d.Units {
		if a, b := u.GPUMsPerToken.A, u.GPUMsPerToken.B; a > 0 && (b/a < 0.8 || b/a > 1.25) || a == 0 && b > 0 {
			moved[u.ID] = true
		}
		if plantedUnits[u.ID] && (u.RecoveredMsPerToken <= 0 || u.GPUMsPerToken.B >= u.GPUMsPerToken.A) {
			t.Errorf("unit %s of a planted kernel: GPU ms/token %+v, recovered %v", u.ID, u.GPUMsPerToken, u.RecoveredMsPerToken)
		}
	}
	if !maps.Equal(moved, plantedUnits) {
		t.Errorf("units that moved %v, the planted kernels' %v", moved, plantedUnits)
	}

	// The compare comment on #1900: one, by the App, naming the planted kernels and
	// their units, and linking the workflow run.
	var comments []string
	for _, sec := range strings.Split(pull, "\n---\n\n## comment ") {
		if strings.Contains(sec, "<!-- perfbot:compare-profile -->") {
			comments = append(comments, sec)
		}
	}
	if len(comments) != 1 || !strings.Contains(comments[0], "by perfbot[bot]") {
		t.Fatalf("%d compare comments on #1900, want one by perfbot[bot]:\n%s", len(comments), pull)
	}
	cm := comments[0]
	spans := func(line string) []string {
		l := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(line) + ".*$").FindString(cm)
		var out []string
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(l, -1) {
			out = append(out, m[1])
		}
		return out
	}
	if a := spans("Kernels only in B (appeared): "); !slices.Equal(a, []string{plantedAdded}) {
		t.Errorf("the comment's appeared kernels %v, want %s alone:\n%s", a, plantedAdded, cm)
	}
	if v := spans("Kernels only in A (vanished): "); len(v) == 0 || slices.ContainsFunc(v, func(n string) bool { return !strings.Contains(n, plantedRemoved) }) {
		t.Errorf("the comment's vanished kernels %v, want the %s kernels alone:\n%s", v, plantedRemoved, cm)
	}
	for u := range plantedUnits {
		if !regexp.MustCompile(`(?m)^\| #` + regexp.QuoteMeta(u) + ` \|`).MatchString(cm) {
			t.Errorf("the comment has no row of unit #%s:\n%s", u, cm)
		}
	}
	// The kernels that changed most start with the planted one, with its units (the
	// single-pass attention kernel is in none: "—"), and the vanished kernels' units
	// are in the units table above.
	first := regexp.MustCompile("(?s)Kernels that changed most:.*?\n\\| `([^`]+)` \\| ([^|]*) \\|").FindStringSubmatch(cm)
	if first == nil || !strings.Contains(first[1], plantedFaster) {
		t.Errorf("the kernels that changed most do not start with %s:\n%s", plantedFaster, cm)
	} else {
		want := "—"
		if i := slices.IndexFunc(d.Kernels, func(k portdiff.KernelDiff) bool { return strings.Contains(k.Kernel, plantedFaster) }); len(d.Kernels[i].Units) > 0 {
			want = "#" + strings.Join(d.Kernels[i].Units, ", #")
		}
		if strings.TrimSpace(first[2]) != want {
			t.Errorf("the row of %s names the units %q, want %q:\n%s", plantedFaster, first[2], want, cm)
		}
	}
	if !strings.Contains(cm, "http://github.invalid/lablup/mlxcel/actions/runs/") {
		t.Errorf("the comment does not link the workflow run:\n%s", cm)
	}
	// The status comment the server opened is finished by the publish job.
	status := false
	for _, sec := range strings.Split(pull, "\n---\n\n## comment ") {
		if strings.Contains(sec, "by perfbot[bot]") && strings.Contains(sec, "/profile rocm compare") && strings.Contains(sec, "done") &&
			!strings.Contains(sec, "queued") {
			status = true
		}
	}
	if !status {
		t.Errorf("no finished status comment of the compare on #1900:\n%s", pull)
	}
	// A profile compare commits nothing: no pull request beyond #1900 and the epic.
	if prs, _ := filepath.Glob(filepath.Join(out, "github", "pull-*.md")); len(prs) != 1 {
		t.Errorf("pull requests %v, want #1900 alone", prs)
	}
	checks := readText(t, filepath.Join(out, "github", "check-runs.md"))
	if !strings.Contains(checks, "completed / neutral") {
		t.Errorf("the check run is not completed neutral:\n%s", checks)
	}
}

func kernelNames(ks []portdiff.KernelDiff) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Kernel)
	}
	return out
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
