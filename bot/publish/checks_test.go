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

// The steps of a run without decode_steps in its summary come from its kernels: the
// call count, from tokens-2 to tokens and at least 2, that most kernels share; on a
// tie the larger count.
func TestStepsFromKernelsAtTheEdges(t *testing.T) {
	for _, c := range []struct {
		name   string
		tokens int
		calls  []int64
		want   int
		why    string // in the reason, when no count is in range
	}{
		{"tokens-2 counts", 10, []int64{8, 8, 11}, 8, ""},
		{"tokens counts", 10, []int64{10, 10, 7}, 10, ""},
		{"under tokens-2 does not", 10, []int64{7, 7, 9}, 9, ""},
		{"over tokens does not", 10, []int64{11, 11, 9}, 9, ""},
		{"2 counts", 3, []int64{2, 2, 3}, 2, ""},
		{"under 2 does not", 2, []int64{1, 1, 2}, 2, ""},
		{"the most shared", 10, []int64{9, 9, 10}, 9, ""},
		{"a tie goes to the larger", 10, []int64{8, 9, 10}, 10, ""},
		{"none in range", 10, []int64{3, 30}, 0, "(8 to 10 times)"},
		{"none in range of three tokens", 3, []int64{1, 7}, 0, "(2 to 3 times)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var b strings.Builder
			b.WriteString(results.KernelsHeader + "\n")
			for i, n := range c.calls {
				fmt.Fprintf(&b, "k%d,other,,,%d,1.0,%d,1,10.000\n", i, n, n)
			}
			if err := os.WriteFile(filepath.Join(dir, "r_decode_kernels.csv"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			// The counts are kept in a map, whose order changes from one range to the
			// next: a tie must not be left to that order.
			for range 32 {
				steps, _, why := stepsFromKernels(dir, &results.Summary{Name: "r", GeneratedTokens: c.tokens})
				if steps != c.want {
					t.Fatalf("steps = %d (%s), want %d", steps, why, c.want)
				}
				if (why == "") != (c.want != 0) || !strings.Contains(why, c.why) {
					t.Fatalf("why = %q with steps %d", why, steps)
				}
			}
		})
	}
}

// A run whose summary has no decode steps and whose kernel table is missing, a
// symbolic link or not a kernel table has no steps, and the reason names which.
func TestStepsFromKernelsOfAMissingOrBrokenFile(t *testing.T) {
	dir := t.TempDir()
	s := func(name string) *results.Summary { return &results.Summary{Name: name, GeneratedTokens: 10} }
	good := filepath.Join(dir, "good_decode_kernels.csv")
	if err := os.WriteFile(good, []byte(results.KernelsHeader+"\nk0,other,,,9,1.0,9,1,10.000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(good, filepath.Join(dir, "link_decode_kernels.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad_decode_kernels.csv"), []byte("name,calls\nk0,9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"missing": "the summary has no decode steps and the folder no missing_decode_kernels.csv",
		"link":    "the summary has no decode steps and the folder no link_decode_kernels.csv",
		"bad":     "the summary has no decode steps and bad_decode_kernels.csv cannot be read: ",
	} {
		steps, k, why := stepsFromKernels(dir, s(name))
		if steps != 0 || k != (kernelCounts{}) || !strings.HasPrefix(why, want) {
			t.Errorf("%s: steps %d, counts %+v, why %q; want 0 steps and %q", name, steps, k, why, want)
		}
	}
	if steps, k, why := stepsFromKernels(dir, s("good")); steps != 9 || k != (kernelCounts{whole: 1}) || why != "" {
		t.Errorf("good: steps %d, counts %+v, why %q", steps, k, why)
	}
}
