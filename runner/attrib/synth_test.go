package attrib

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
	"github.com/lablup/perfbot/runner/synth"
)

// boottimeWindow reads decode_start and measured_end on the boot-time clock from a
// bench log's phase marks.
func boottimeWindow(t *testing.T, path string) (lo, hi int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	marks := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[0] != "[phase]" {
			continue
		}
		for _, kv := range fields[2:] {
			if v, ok := strings.CutPrefix(kv, "boottime_ns="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("%s: phase mark %q: %v", path, sc.Text(), err)
				}
				marks[fields[1]] = n
			}
		}
	}
	lo, okLo := marks["decode_start"]
	hi, okHi := marks["measured_end"]
	if !okLo || !okHi {
		t.Fatalf("%s: no boottime decode_start/measured_end marks", path)
	}
	return lo, hi
}

// synthInput reads a synthetic run's trace and cuts the decode window as docs/analysis.md
// §2-§3 do, with the host gap charged per dispatch by the frontier walk.
func synthInput(t *testing.T, out *synth.Output) Input {
	t.Helper()
	tr, err := rocprof.ReadKernelTrace(out.TraceFile)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := boottimeWindow(t, out.BenchLog)
	in := Input{Names: tr.Names, HasGrid: tr.HasGrid, Tokens: out.Truth.GeneratedTokens,
		ModelType: out.Truth.ModelType, Temperature: float64(out.Truth.Temperature), TopP: float64(out.Truth.TopP)}
	if out.Truth.RopeScaling != nil {
		in.RopeScaling = *out.Truth.RopeScaling
	}
	frontier := lo
	for _, d := range tr.Dispatches {
		if d.Start < lo || d.Start > hi {
			continue
		}
		in.Name = append(in.Name, d.Name)
		in.Grid = append(in.Grid, d.Grid)
		in.DurNs = append(in.DurNs, d.End-d.Start)
		in.GPUSumNs += d.End - d.Start
		in.GapNs = append(in.GapNs, max(0, min(d.Start, hi)-frontier))
		frontier = max(frontier, min(d.End, hi))
	}
	in.TailGapNs = hi - frontier
	return in
}

// Every decode dispatch of every synthetic family, greedy and sampled, gets the role
// the synthesizer placed it for, and the per-step counts are exact.
func TestSyntheticRunsMatchTheirTruth(t *testing.T) {
	t.Parallel()
	// Role counts per decode step that the published profile checked by hand.
	perStep := map[string]map[string]int{
		"granite-hybrid":  {"ssm_step": 47 * 36},
		"nemotron-hybrid": {"ssm_step": 50 * 23},
		"qwen3-moe":       {"moe_expert_gemv": 3 * 48, "moe_gather_indices": 3 * 48, "moe_weighted_sum": 4 * 48},
	}
	for _, model := range synth.Models() {
		for _, s := range []results.Sampling{results.Greedy, {Temperature: 0.7, TopP: 0.95}} {
			t.Run(model+"_"+s.Tag(), func(t *testing.T) {
				t.Parallel()
				opts := synth.DefaultOptions()
				opts.Model, opts.Sampling, opts.Tokens, opts.Warmup = model, s, 6, 2
				out, err := synth.Generate(opts, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				truth := out.Truth
				in := synthInput(t, out)
				if len(in.Name) != len(truth.DecodeRoles) {
					t.Fatalf("%d decode dispatches, the truth has %d", len(in.Name), len(truth.DecodeRoles))
				}
				res, err := Default().Attribute(in)
				if err != nil {
					t.Fatal(err)
				}
				wrong := 0
				counts := map[string]int{}
				for i, ro := range res.Roles {
					got, want := res.RoleNames[ro], truth.RoleNames[truth.DecodeRoles[i]]
					counts[got]++
					if got != want {
						if wrong < 10 {
							t.Errorf("dispatch %d (%s): role %s, the truth says %s", i, short(in.Names[in.Name[i]]), got, want)
						}
						wrong++
					}
				}
				if wrong > 0 {
					t.Fatalf("%d of %d dispatches have the wrong role", wrong, len(res.Roles))
				}
				for role, n := range truth.RolesPerStep {
					// The first step also grows the KV cache: extra unattributed copies.
					if role == Unattributed {
						continue
					}
					if counts[role] != n*truth.Steps {
						t.Errorf("%s: %d dispatches in %d steps, want %d per step", role, counts[role], truth.Steps, n)
					}
				}
				for role, n := range perStep[model] {
					if counts[role] != n*truth.Steps {
						t.Errorf("%s: %d per step, want %d (per step: %s)", role, counts[role]/truth.Steps, n, describe(counts, truth.Steps))
					}
				}
				// Host gap per role: the walk here and the synthesizer's agree to the ns,
				// and the summary figures are those sums per token.
				for role, ns := range truth.RoleHostGapNs {
					if role == "tail" {
						if in.TailGapNs != ns {
							t.Errorf("tail gap %d ns, truth %d", in.TailGapNs, ns)
						}
						continue
					}
					got, _ := res.RoleHostGapMsPerToken.Get(role)
					if want := results.Round(float64(ns)/1e6/float64(in.Tokens), 4); got != want {
						t.Errorf("%s host gap %v ms/token, truth %v", role, got, want)
					}
				}
				if s.Temperature > 0 {
					u, _ := res.Units.Get("2064")
					if u.ReachedDefaultSharePct == 0 {
						t.Error("a sampled run must reach the sampler port")
					}
				}
			})
		}
	}
}

// describe lists role counts per step, for failure messages.
func describe(counts map[string]int, steps int) string {
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, counts[k]/steps)
	}
	return b.String()
}
