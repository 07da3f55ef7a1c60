package rank

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/results"
)

type roleFig struct{ share, disp float64 }

// model is one model's published decode figures (docs/analysis.md §5), per token.
type model struct {
	dir, modelType     string
	ropeScaling        string
	gpuMs, gapMs, disp float64
	roles              map[string]roleFig
}

var (
	llama = model{"Meta-Llama-3.1-8B-Instruct-4bit", "llama", "llama3", 23.34, 1.80, 492, map[string]roleFig{
		"rope_append": {0.83, 127.5}, "add_rms_join_post_attn": {0.83, 63.5}, "add_rms_join": {0.85, 63.5}, "sampler_tail": {0.08, 7.9},
	}}
	qwen = model{"Qwen3-30B-A3B-4bit", "qwen3_moe", "", 13.36, 3.63, 1540, map[string]roleFig{
		"moe_expert_gemv": {42.12, 142.9}, "moe_activation": {1.63, 47.6}, "moe_weighted_sum": {2.13, 190.5}, "moe_gather_indices": {0.91, 142.9},
		"rope_append": {1.02, 96}, "add_rms_join_post_attn": {1.8, 95.2}, "add_rms_join": {1.82, 95.2}, "sampler_tail": {0.17, 7.9},
	}}
	granite = model{"granite-4.0-h-tiny-4bit", "granitemoehybrid", "", 11.47, 8.59, 3197, map[string]roleFig{
		"ssm_step": {29.8, 1692}, "ssm_conv": {1.2, 72}, "ssm_gated_norm": {1.1, 72},
		"moe_expert_gemv": {20.0, 108}, "moe_activation": {2.0, 36}, "moe_weighted_sum": {2.4, 144}, "moe_gather_indices": {1.0, 108},
		"rope_append": {0.1, 16}, "add_rms_join": {1.0, 80}, "sampler_tail": {0.1, 7.9},
	}}
	nemotron = model{"Nemotron-3-Nano-30B-A3B-4bit", "nemotron_h", "", 14.28, 8.93, 2008, map[string]roleFig{
		"ssm_step": {20.0, 1150}, "ssm_conv": {1.0, 46},
		"moe_expert_gemv": {24.0, 69}, "moe_activation": {2.0, 23}, "moe_weighted_sum": {2.2, 92}, "moe_gather_indices": {1.0, 69},
		"rope_append": {0.2, 24}, "add_rms_join": {1.2, 60}, "sampler_tail": {0.1, 7.9},
	}}
	// Sampled runs add a sampler tail (docs/analysis.md §5: 1.2-3.8 % with top-p, 32-65
	// dispatches per token).
	sampledTail = map[string]roleFig{
		llama.dir: {3.0, 60}, qwen.dir: {2.5, 50}, granite.dir: {1.5, 40}, nemotron.dir: {3.8, 65},
	}
)

// summary builds a perfbot-style summary for a model and sampling; withGap false
// leaves out the per-role host gap as the target repo's analyzer does.
func summary(m model, s results.Sampling, withGap bool) *results.Summary {
	roles := map[string]roleFig{}
	for k, v := range m.roles {
		roles[k] = v
	}
	disp := m.disp
	if s.Temperature > 0 {
		t := sampledTail[m.dir]
		disp += t.disp - roles["sampler_tail"].disp
		roles["sampler_tail"] = t
	}
	const tokens = 128
	sum := &results.Summary{
		Name:            results.RunName("models/"+m.dir, s),
		ModelType:       m.modelType,
		Temperature:     results.Num(s.Temperature),
		GeneratedTokens: tokens,
		DecodeWallMs:    results.Num((m.gpuMs + m.gapMs) * tokens),
		DecodeGPUSumMs:  results.Num(m.gpuMs * tokens),
		Sampling:        s.Tag(),
		RopeScaling:     m.ropeScaling,
	}
	names := make([]string, 0, len(roles))
	for k := range roles {
		names = append(names, k)
	}
	slices.Sort(names)
	shareLeft, dispLeft := 100.0, disp
	for _, k := range names {
		shareLeft -= roles[k].share
		dispLeft -= roles[k].disp
	}
	add := func(role string, f roleFig) {
		sum.RoleSharePct = append(sum.RoleSharePct, results.KV{Key: role, Value: results.Num(f.share)})
		sum.RoleDispatchesPerToken = append(sum.RoleDispatchesPerToken, results.KV{Key: role, Value: results.Num(f.disp)})
		sum.RoleGPUMsPerToken = append(sum.RoleGPUMsPerToken, results.KV{Key: role, Value: results.Num(f.share / 100 * m.gpuMs)})
		if withGap {
			// The profiler's host gap falls about evenly per dispatch.
			sum.RoleHostGapMsPerToken = append(sum.RoleHostGapMsPerToken, results.KV{Key: role, Value: results.Num(m.gapMs * f.disp / disp)})
		}
	}
	add("unattributed", roleFig{shareLeft, dispLeft})
	for _, k := range names {
		add(k, roles[k])
	}
	if !withGap {
		sum.RoleGPUMsPerToken = nil
		sum.Sampling = ""
		sum.RopeScaling = ""
	}
	return sum
}

func publishedRuns(withGap bool) []*results.Summary {
	var out []*results.Summary
	for _, m := range []model{granite, nemotron, qwen, llama} {
		for _, s := range []results.Sampling{results.Greedy, {Temperature: 0.7, TopP: 0.95}} {
			out = append(out, summary(m, s, withGap))
		}
	}
	return out
}

func unitByID(t *testing.T, rk *Ranking, id string) UnitRank {
	t.Helper()
	for _, u := range rk.Units {
		if u.ID == id {
			return u
		}
	}
	t.Fatalf("no unit %s in the ranking", id)
	return UnitRank{}
}

// The published profile's figures rank SSM first, MoE second, samplers third; the
// shipped override puts #2068 above #2063.
func TestRankPublishedShapes(t *testing.T) {
	t.Parallel()
	for _, withGap := range []bool{true, false} {
		rk, err := Rank(publishedRuns(withGap), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := rk.OrderLine(); got != "#2067, #2065, #2064, #2068, #2063" {
			t.Errorf("withGap=%v: order %s, want #2067, #2065, #2064, #2068, #2063", withGap, got)
		}
		ssm := unitByID(t, rk, "2067")
		if !strings.HasPrefix(ssm.Best.Run, "granite") || ssm.Best.ReachedSharePct != 29.8 || ssm.Best.DispatchesPerTokenRemoved != 1692 {
			t.Errorf("withGap=%v: 2067 best %+v", withGap, ssm.Best)
		}
		moe := unitByID(t, rk, "2065")
		// Qwen greedy: the expert GEMVs count 0, the rest of the MoE roles in full,
		// plus (with gaps) the host gap of 523.9 of 1540 dispatches.
		wantMs := (1.63 + 2.13 + 0.91) / 100 * 13.36
		if withGap {
			wantMs += 3.63 * 523.9 / 1540
		}
		if moe.Best.Run != "Qwen3-30B-A3B-4bit_greedy" || math.Abs(moe.Best.RecoverableMsPerToken-wantMs) > 1e-4 {
			t.Errorf("withGap=%v: 2065 best %s recovers %v ms/token, want Qwen greedy %v", withGap, moe.Best.Run, moe.Best.RecoverableMsPerToken, wantMs)
		}
		if moe.Best.ReachedSharePct != 46.79 {
			t.Errorf("2065 reached share %v, want 46.79", moe.Best.ReachedSharePct)
		}
		if want := 100 * wantMs / (13.36 + 3.63); math.Abs(moe.Best.RecoverablePctOfWall-want) > 0.01 {
			t.Errorf("2065 %% of wall %v, want %v", moe.Best.RecoverablePctOfWall, want)
		}
		// Granite and Nemotron carry MoE roles the port does not reach.
		for _, f := range moe.Runs {
			if strings.HasPrefix(f.Run, "granite") && (f.ReachedSharePct != 0 || f.FallbackNotReachedPct != 25.4) {
				t.Errorf("2065 on granite: reached %v, not reached %v; want 0 and 25.4", f.ReachedSharePct, f.FallbackNotReachedPct)
			}
		}
		// The largest fallback share the MoE port misses: Nemotron's 29.2 %.
		if m := moe.MostNotReached; m == nil || !strings.HasPrefix(m.Run, "Nemotron") || m.FallbackNotReachedPct != 29.2 {
			t.Errorf("2065 most not reached %+v, want Nemotron's 29.2", m)
		}
		sam := unitByID(t, rk, "2064")
		if !strings.HasSuffix(sam.Best.Run, "_t0.7-p0.95") {
			t.Errorf("2064 best run %s, want a sampled run", sam.Best.Run)
		}
		op := unitByID(t, rk, "2063")
		if op.Evidence || op.OptIn == nil || !strings.HasPrefix(op.OptIn.Run, "Meta-Llama") || op.OptIn.ReachedSharePct != 0.83 {
			t.Errorf("2063: evidence %v opt-in %+v; want none by default and the llama figures opt-in", op.Evidence, op.OptIn)
		}
		if got := len(rk.KernelTimeOnlyRuns); (got == 0) != withGap {
			t.Errorf("withGap=%v: %d runs ranked on kernel time alone", withGap, got)
		}
	}
}

func TestRankMarkdownShowsOrderEvidenceAndOverride(t *testing.T) {
	t.Parallel()
	rk, err := Rank(publishedRuns(true), nil)
	if err != nil {
		t.Fatal(err)
	}
	md := rk.Markdown()
	for _, want := range []string{
		"**Ranked port order: #2067, #2065, #2064, #2068, #2063**",
		"| 1 | #2067 (item 7) | SSM update (ssm_update_kernel) | `granite-4.0-h-tiny-4bit_greedy` | 29.80 % |",
		"| 2 | #2065 (item 5) |",
		"forward_fused_kernel caller",
		"| 0.00 % (29.20 % in `Nemotron-3-Nano-30B-A3B-4bit_greedy`) |",
		"- #2068 placed before #2063: it has a path, batched serving, that this profile does not measure",
		"0.83 % reached",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "kernel time alone") {
		t.Errorf("markdown claims kernel time alone with per-role gaps present:\n%s", md)
	}
	if n := strings.Count(md, "\n| "); n != 6 { // header + 5 units
		t.Errorf("%d table rows, want 6", n)
	}
}

func TestRankOverridesFromRules(t *testing.T) {
	t.Parallel()
	base := string(attrib.DefaultRulesYAML())
	i := strings.Index(base, "\nranking:\n")
	if i < 0 {
		t.Fatal("default rules have no ranking section")
	}
	cases := []struct {
		ranking, order, line string
	}{
		{`  - {unit: "2063", action: pin, position: 1, reason: the fused norm lands first}`,
			"#2063, #2067, #2065, #2064, #2068", "- #2063 pinned at place 1: the fused norm lands first"},
		{`  - {unit: "2067", action: after, other: "2064", reason: waits for the sampler work}`,
			"#2065, #2064, #2067, #2063, #2068", "- #2067 placed after #2064: waits for the sampler work"},
		{`  - {unit: "2065", action: before, other: "2064", reason: already above}`,
			"#2067, #2065, #2064, #2063, #2068", "- #2065 placed before #2064 (it already stood there): already above"},
	}
	for _, c := range cases {
		rules, err := attrib.Parse([]byte(base[:i]+"\nranking:\n"+c.ranking+"\n"), "rules.yml")
		if err != nil {
			t.Fatal(err)
		}
		rk, err := Rank(publishedRuns(true), rules)
		if err != nil {
			t.Fatal(err)
		}
		if got := rk.OrderLine(); got != c.order {
			t.Errorf("%s: order %s, want %s", c.ranking, got, c.order)
		}
		if md := rk.Markdown(); !strings.Contains(md, c.line) {
			t.Errorf("markdown lacks %q:\n%s", c.line, md)
		}
		for i, u := range rk.Units {
			if u.Rank != i+1 || rk.Order[i] != u.ID {
				t.Errorf("unit %s at %d has rank %d", u.ID, i, u.Rank)
			}
		}
	}
}

// The maintainers' two summaries carry no per-role host gap: the rank works on kernel
// time alone and says so.
func TestRankFixtureSummaries(t *testing.T) {
	t.Parallel()
	rk, err := Rank(fixtureRuns(t), attrib.Default())
	if err != nil {
		t.Fatal(err)
	}
	// Only the MoE port is reached (Qwen3); the rest by fallback share, then the
	// override lifts #2068 above #2063.
	if got := rk.OrderLine(); got != "#2065, #2068, #2063, #2064, #2067" {
		t.Errorf("order %s", got)
	}
	if len(rk.KernelTimeOnlyRuns) != 2 {
		t.Errorf("kernel-time-only runs %v, want both", rk.KernelTimeOnlyRuns)
	}
	md := rk.Markdown()
	for _, want := range []string{"**Ranked on kernel time alone** for every run", "`Qwen3-30B-A3B-4bit_greedy`", "rope_scaling"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	moe := unitByID(t, rk, "2065")
	// 4.67 % of 1709.857 ms over 128 tokens: the expert GEMVs' 42.12 % counts 0.
	if want := 4.67 / 100 * 1709.857 / 128; math.Abs(moe.Best.RecoverableMsPerToken-want) > 1e-4 || moe.Best.HostGapMsPerToken != 0 {
		t.Errorf("2065 recovers %v ms/token (gap %v), want %v", moe.Best.RecoverableMsPerToken, moe.Best.HostGapMsPerToken, want)
	}
	// The summary's own opt-in figure for 2063 on Llama (0.83) is what the rules give
	// when rope_scaling is unknown.
	if op := unitByID(t, rk, "2063"); op.OptIn == nil || op.OptIn.ReachedSharePct != 0.83 {
		t.Errorf("2063 opt-in %+v, want 0.83 on Llama", op.OptIn)
	}
	js, err := rk.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Order []string `json:"order"`
		Units []struct {
			Unit string `json:"unit"`
			Best struct {
				Run string `json:"run"`
			} `json:"best"`
		} `json:"units"`
		KernelTimeOnlyRuns []string `json:"kernel_time_only_runs"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if strings.Join(back.Order, ",") != "2065,2068,2063,2064,2067" || back.Units[0].Best.Run != "Qwen3-30B-A3B-4bit_greedy" || len(back.KernelTimeOnlyRuns) != 2 {
		t.Errorf("JSON round trip: %+v", back)
	}
}

func TestRankRejectsUnusableInput(t *testing.T) {
	t.Parallel()
	if _, err := Rank(nil, nil); err == nil || !strings.Contains(err.Error(), "no run summaries") {
		t.Errorf("Rank(nil) = %v", err)
	}
	s := summary(llama, results.Greedy, true)
	s.GeneratedTokens = 0
	if _, err := Rank([]*results.Summary{s}, nil); err == nil || !strings.Contains(err.Error(), "generated_tokens") {
		t.Errorf("Rank without tokens = %v", err)
	}
	// The same run twice would count twice, or the last one alone.
	a, b := summary(llama, results.Greedy, true), summary(llama, results.Greedy, true)
	if _, err := Rank([]*results.Summary{a, b}, nil); err == nil || !strings.Contains(err.Error(), "two summaries of run \""+a.Name+"\"") {
		t.Errorf("Rank of one run twice = %v", err)
	}
}
