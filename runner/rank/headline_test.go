package rank

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/synthtest"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/synth"
)

// A unit's headline run is a greedy one even where a sampled run recovers more; the
// sampled run is listed beside it. Told another headline sampling (the config's
// default), the rank shows that one.
func TestHeadlineRunIsTheDefaultSampling(t *testing.T) {
	t.Parallel()
	topP := results.Sampling{Temperature: 0.7, TopP: 0.95}
	g := summary(granite, results.Greedy, true)
	bigger := granite
	bigger.roles = map[string]roleFig{}
	for k, v := range granite.roles {
		bigger.roles[k] = v
	}
	bigger.roles["ssm_step"] = roleFig{35, 1692}
	s := summary(bigger, topP, true)
	rk, err := Rank([]*results.Summary{s, g}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ssm := unitByID(t, rk, "2067")
	if ssm.Best.Run != g.Name || ssm.Best.Sampling != "greedy" || len(ssm.OtherSamplings) != 1 || ssm.OtherSamplings[0].Run != s.Name ||
		ssm.OtherSamplings[0].NetPctOfWall <= ssm.Best.NetPctOfWall {
		t.Fatalf("2067: headline %s, others %+v; want the greedy run and the larger top-p one beside it", ssm.Best.Run, ssm.OtherSamplings)
	}
	want := "| `t0.7-p0.95`: " + strings.TrimSpace(results.PyFloat(ssm.OtherSamplings[0].NetMsPerToken))
	if row := rowOf(rk.Markdown(), "#2067"); !strings.Contains(row, "| `"+g.Name+"` | 29.80 % |") || !strings.Contains(row, want) {
		t.Errorf("2067 row %s\nwant the greedy headline and %q", row, want)
	}
	// The samplers are reached in the sampled run only: it is their headline.
	if sam := unitByID(t, rk, "2064"); sam.Best.Run != s.Name || len(sam.OtherSamplings) != 0 {
		t.Errorf("2064: headline %s, others %+v; want the sampled run alone", sam.Best.Run, sam.OtherSamplings)
	}

	rk, err = RankWith([]*results.Summary{s, g}, nil, Options{Headline: "t0.70-p0.95"})
	if err != nil {
		t.Fatal(err)
	}
	if ssm := unitByID(t, rk, "2067"); ssm.Best.Run != s.Name || len(ssm.OtherSamplings) != 1 || ssm.OtherSamplings[0].Run != g.Name || rk.Headline != "t0.7-p0.95" {
		t.Errorf("headline t0.7-p0.95: 2067 at %s, others %+v (headline %s)", ssm.Best.Run, ssm.OtherSamplings, rk.Headline)
	}
	// The config's default sampling list gives the headline: its first setting.
	if HeadlineOf(nil) != "" || HeadlineOf([]string{"t0.7-p0.95", "greedy"}) != "t0.7-p0.95" {
		t.Errorf("HeadlineOf: %q, %q", HeadlineOf(nil), HeadlineOf([]string{"t0.7-p0.95", "greedy"}))
	}
	if _, err := RankWith([]*results.Summary{g}, nil, Options{Headline: "warm"}); err == nil || !strings.Contains(err.Error(), "the headline sampling") {
		t.Errorf("a bad headline sampling: %v", err)
	}
}

// The real folder's runs are greedy: every headline run is one of them, with nothing
// beside it.
func TestHeadlineRunsOfTheRealFolder(t *testing.T) {
	t.Parallel()
	rk, err := Rank(fixtureRuns(t), attrib.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rk.Units {
		if u.Best.Sampling != "greedy" || !strings.HasSuffix(u.Best.Run, "_greedy") || len(u.OtherSamplings) != 0 {
			t.Errorf("#%s: headline %s (%s), others %+v", u.ID, u.Best.Run, u.Best.Sampling, u.OtherSamplings)
		}
	}
}

// Synthetic runs analyzed end to end, greedy, t0.7 and t0.7-p0.95: the MoE port's
// headline is Qwen3's greedy run with its sampled runs beside it; the samplers, which
// only sampled runs reach, have a sampled headline, the other sampling beside it.
func TestHeadlineRunsOfSyntheticRuns(t *testing.T) {
	t.Parallel()
	var sums []*results.Summary
	for i, run := range []struct {
		model string
		s     results.Sampling
	}{
		{"qwen3-moe", results.Greedy}, {"qwen3-moe", results.Sampling{Temperature: 0.7, TopP: 1}},
		{"qwen3-moe", results.Sampling{Temperature: 0.7, TopP: 0.95}}, {"llama", results.Sampling{Temperature: 0.7, TopP: 0.95}},
	} {
		o := synth.DefaultOptions()
		o.Model, o.Tokens, o.Sampling, o.Seed = run.model, 8, run.s, int64(100+i)
		sums = append(sums, analyzeSynth(t, o))
	}
	rk, err := Rank(sums, attrib.Default())
	if err != nil {
		t.Fatal(err)
	}
	moe := unitByID(t, rk, "2065")
	if moe.Best.Run != "Qwen3-30B-A3B-4bit_greedy" || len(moe.OtherSamplings) != 2 ||
		moe.OtherSamplings[0].Run != "Qwen3-30B-A3B-4bit_t0.7" || moe.OtherSamplings[1].Run != "Qwen3-30B-A3B-4bit_t0.7-p0.95" {
		t.Errorf("2065: headline %s, others %+v", moe.Best.Run, moe.OtherSamplings)
	}
	sam := unitByID(t, rk, "2064")
	if !sam.Evidence || sam.Best.Sampling == "greedy" || len(sam.OtherSamplings) != 1 || sam.OtherSamplings[0].Sampling == sam.Best.Sampling ||
		sam.OtherSamplings[0].Sampling == "greedy" {
		t.Errorf("2064: headline %s (%s), others %+v; want a sampled headline and the other sampling beside it", sam.Best.Run, sam.Best.Sampling, sam.OtherSamplings)
	}
	// Each listed run is its sampling's best.
	for _, o := range append([]Figures{sam.Best}, sam.OtherSamplings...) {
		for _, f := range sam.Runs {
			if f.Sampling == o.Sampling && f.NetPctOfWall > o.NetPctOfWall {
				t.Errorf("2064: %s recovers more than %s, listed for %s", f.Run, o.Run, o.Sampling)
			}
		}
	}
}

// analyzeSynth writes a synthetic run and analyzes it as `perfbot analyze` would.
func analyzeSynth(t *testing.T, o synth.Options) *results.Summary {
	t.Helper()
	res := synthtest.Analyze(t, o)
	return res.Summary
}
