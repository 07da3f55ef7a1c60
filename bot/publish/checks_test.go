package publish

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/synthtest"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/synth"
)

// synthFolder analyzes synthetic runs of the models into a results folder named
// <gfx>_abcdef12 and returns it.
func synthFolder(t *testing.T, gfx string, models ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), gfx+"_abcdef12")
	for _, model := range models {
		o := synth.DefaultOptions()
		o.Model, o.Tokens, o.Warmup = model, 8, 2
		res := synthtest.Analyze(t, o)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := res.WriteOutputs(dir); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Synthetic Llama and Qwen3-MoE runs (the published models' shapes) on gfx1151: the
// roofline view counts the weights a step reads (4.22 GB and 1.71 GB) times the plain
// decode rate against the 256 GB/s peak; the window checks show 7 steps for 8 tokens,
// dispatches per step and layer, no cut step, and the one step that grows the KV cache;
// a hybrid's weights are said to be unknown, with the reason.
func TestPageRooflineAndWindowChecksOfSynthRuns(t *testing.T) {
	t.Parallel()
	dir := synthFolder(t, "gfx1151", "llama", "qwen3-moe", "granite-hybrid")
	page, _, err := Page(PageOptions{ResultsDir: dir, PageDir: filepath.Dir(dir)})
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]*results.Summary{}
	for _, m := range []string{"llama", "qwen3-moe"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*_summary.json"))
		for _, p := range paths {
			s, err := results.ReadSummary(p)
			if err != nil {
				t.Fatal(err)
			}
			if s.ModelType == map[string]string{"llama": "llama", "qwen3-moe": "qwen3_moe"}[m] {
				sums[m] = s
			}
		}
	}
	for m, gb := range map[string]float64{"llama": 4.221370368, "qwen3-moe": 1.710931968} {
		s := sums[m]
		tok := float64(*s.PlainDecodeTokS)
		want := fmt.Sprintf("| `%s` | %.2f | %.2f (plain) | %.1f | 256 | %.0f |", s.Name, gb, tok, gb*tok, 100*gb*tok/256)
		if !strings.Contains(page, want) {
			t.Errorf("%s: no %q in:\n%s", m, want, page)
		}
	}
	wantIn(t, page,
		"Peak of gfx1151: 256 GB/s, Strix Halo",
		"| 7 | 495.0 (495 to 559) | 32 | 15.47 | the window's edges hold 495 dispatches, one whole step: it cuts no step; the steps differ by up to 64 dispatches (work done once, such as growing the KV cache); dispatches/token divides by the 8 generated tokens, the window holds 7 steps",
		"4-bit weights with a float16 scale and bias per group of 64.",
		"not known: model type granitemoehybrid is not one whose layers are counted",
	)
}

// A window that cuts a step, and a device whose peak perfbot does not know, are said.
func TestPageWindowCutAndUnknownPeak(t *testing.T) {
	t.Parallel()
	dir := synthFolder(t, "gfx1201", "llama")
	paths, _ := filepath.Glob(filepath.Join(dir, "*_summary.json"))
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Replace(string(b), `"edge_dispatches": 495`, `"edge_dispatches": 240`, 1)
	if cut == string(b) {
		t.Fatalf("no edge_dispatches of 495 in:\n%s", b)
	}
	if err := os.WriteFile(paths[0], []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	page, _, err := Page(PageOptions{ResultsDir: dir, PageDir: filepath.Dir(dir)})
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, page,
		"the window's edges hold 240 dispatches against 495 in a step: the window cuts a step",
		"The peak memory bandwidth of gfx1201 is unknown to perfbot, so there is no share of it.",
		"| unknown | — |",
	)
}
