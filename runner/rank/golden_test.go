package rank

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/results"
)

func fixtureRuns(t *testing.T) []*results.Summary {
	t.Helper()
	dir := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	paths, err := filepath.Glob(filepath.Join(dir, "*_summary.json"))
	if err != nil || len(paths) != 2 {
		t.Fatalf("fixture summaries: %v %v", paths, err)
	}
	var sums []*results.Summary
	for _, p := range paths {
		s, err := results.ReadSummary(p)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
	}
	return sums
}

// The whole ranking as it is published, table and JSON, for the real profile (four of
// its five units reached by no run) and for the published shapes with and without the
// per-role host gap: a changed best run, figure, or "(x % in run)" annotation on any
// row fails.
func TestRankGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		runs func(*testing.T) []*results.Summary
	}{
		{"fixture", fixtureRuns},
		{"published", func(*testing.T) []*results.Summary { return publishedRuns(true) }},
		{"published-kernel-time", func(*testing.T) []*results.Summary { return publishedRuns(false) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rk, err := Rank(c.runs(t), attrib.Default())
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/golden/"+c.name+".md", rk.Markdown())
			js, err := rk.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/golden/"+c.name+".json", string(js))
		})
	}
}

// A unit no run reaches is shown at the run with the largest fallback share (ties: the
// most fallback dispatches), with no "(x % in run)" annotation, since no run misses
// more of it than that one.
func TestUnreachedUnitRow(t *testing.T) {
	t.Parallel()
	runs := []*results.Summary{summary(llama, results.Greedy, true), summary(qwen, results.Greedy, true), summary(granite, results.Greedy, true)}
	rk, err := Rank(runs, attrib.Default())
	if err != nil {
		t.Fatal(err)
	}
	u := unitByID(t, rk, "2063")
	if u.Evidence || u.Best.Run != "Qwen3-30B-A3B-4bit_greedy" || u.Best.FallbackSharePct != 2.82 || u.MostNotReached != nil {
		t.Errorf("2063: evidence %v best %+v most not reached %+v; want Qwen's 2.82 %% and no other run named", u.Evidence, u.Best, u.MostNotReached)
	}
	want := "| 4 | #2063 (item 3) | fused_add_rms_norm + fused_rope_qk_append | `Qwen3-30B-A3B-4bit_greedy` | 0.00 % | 0.0000 | — | 0.0000 | 0.00 % | 0.0 | 2.82 % | — | " +
		"0.83 % reached, 0.4260 ms/token net (1.69 % of wall) in `Meta-Llama-3.1-8B-Instruct-4bit_greedy` | qwen3_moe never calls fused_add_rms_norm or forward_fused_rope_append |"
	if got := rowOf(rk.Markdown(), "#2063"); got != want {
		t.Errorf("row\n got %s\nwant %s", got, want)
	}

	figs := func(fb ...float64) []Figures {
		var out []Figures
		for i := 0; i+1 < len(fb); i += 2 {
			out = append(out, Figures{Run: string(rune('a' + i/2)), FallbackSharePct: fb[i], FallbackDispatchesPerToken: fb[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		name string
		figs []Figures
		want string
	}{
		{"largest share in the middle", figs(1, 9, 3, 1, 2, 5), "b"},
		{"largest share last", figs(1, 9, 2, 5, 3, 1), "c"},
		{"equal share: most dispatches", figs(3, 1, 3, 4, 3, 2), "b"},
		{"all equal: the first", figs(3, 4, 3, 4), "a"},
	} {
		if got := best(c.figs, false).Run; got != c.want {
			t.Errorf("%s: best run %s, want %s", c.name, got, c.want)
		}
	}
}

// rowOf returns the table row of a unit, "" when there is none.
func rowOf(md, unit string) string {
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| ") && strings.Contains(l, " | "+unit+" ") {
			return l
		}
	}
	return ""
}

// Rules without overrides, and a unit without an epic item: no empty "Overrides" list
// and no "(item 0)".
func TestRankGoldenCustomRules(t *testing.T) {
	t.Parallel()
	base := string(attrib.DefaultRulesYAML())
	i := strings.Index(base, "\nranking:\n")
	if i < 0 || !strings.Contains(base, "    epic_item: 4\n") {
		t.Fatal("the default rules changed shape: no ranking section or no epic item 4")
	}
	rules, err := attrib.Parse([]byte(strings.Replace(base[:i]+"\n", "    epic_item: 4\n", "", 1)), "rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	rk, err := Rank(publishedRuns(true), rules)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/golden/custom-rules.md", rk.Markdown())
}

// An opt-in reach that adds only roles the run never dispatched reaches nothing: no
// opt-in figures are shown.
func TestRankOptInReachingNothing(t *testing.T) {
	t.Parallel()
	bare := llama
	bare.roles = map[string]roleFig{"sampler_tail": llama.roles["sampler_tail"]}
	rk, err := Rank([]*results.Summary{summary(bare, results.Greedy, true)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rk.Units {
		if u.OptIn != nil {
			t.Errorf("%s: opt-in %+v, want none", u.ID, u.OptIn)
		}
	}
}

// Per-token figures need tokens and a wall time: zero of either is refused, the
// smallest positive values are not.
func TestRankPerTokenInputs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tokens int
		wallMs float64
		ok     bool
	}{
		{"no tokens", 0, 100, false},
		{"no wall time", 128, 0, false},
		{"negative wall time", 128, -1, false},
		{"one token", 1, 100, true},
		{"tiny wall time", 128, 0.001, true},
	}
	for _, c := range cases {
		s := summary(llama, results.Greedy, true)
		s.GeneratedTokens, s.DecodeWallMs = c.tokens, results.Num(c.wallMs)
		_, err := Rank([]*results.Summary{s}, nil)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "no generated_tokens or decode_wall_ms") {
			t.Errorf("%s: err %v does not say what is missing", c.name, err)
		}
	}
}

// A summary's own unit figures (exact, from the analysis) replace the ones re-derived
// from rounded role shares when they stand for the same role sets, and only then.
func TestRankUsesTheSummarysOwnUnitFigures(t *testing.T) {
	t.Parallel()
	var moe attrib.Unit
	for _, u := range attrib.Default().Units() {
		if u.ID == "2065" {
			moe = u
		}
	}
	s := summary(qwen, results.Greedy, true)
	def, _ := moe.Reach(attrib.Run{ModelType: s.ModelType})
	n := func(v float64) *results.Num { x := results.Num(v); return &x }
	own := results.Unit{Port: moe.Port, FallbackSharePct: 50, FallbackDispatchesPerToken: 600, ReachedDefaultSharePct: 47,
		ReachedDefaultDispatchesPerToken: 500, RecoverableDefaultMsPerToken: n(2), ReachedDefaultHostGapMsPerToken: n(0.5),
		Roles: moe.Roles, ReachedDefaultRoles: def}
	cases := []struct {
		name  string
		roles []string
		want  Figures
	}{
		{"same roles", moe.Roles, Figures{Sampling: "greedy", ReachedSharePct: 47, RecoverableMsPerToken: 2, RecoverablePctOfWall: 11.77, HostGapMsPerToken: 0.5,
			NetMsPerToken: 2, NetPctOfWall: 11.77, DispatchesPerTokenRemoved: 500, FallbackSharePct: 50, FallbackDispatchesPerToken: 600, FallbackNotReachedPct: 3}},
		// Figures of the target repo's analyzer (no roles recorded) that re-added rounded
		// role figures cannot give are of other roles: the re-added ones stay.
		{"no roles recorded", nil, Figures{Sampling: "greedy", ReachedSharePct: 46.79, RecoverableMsPerToken: 1.8588, RecoverablePctOfWall: 10.94, HostGapMsPerToken: 1.2349,
			NetMsPerToken: 1.8588, NetPctOfWall: 10.94, DispatchesPerTokenRemoved: 523.9, FallbackSharePct: 46.79, FallbackDispatchesPerToken: 523.9}},
	}
	for _, c := range cases {
		su := own
		su.Roles = c.roles
		s.PortUnits = results.Units{{ID: "2065", Unit: su}}
		rk, err := Rank([]*results.Summary{s}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := unitByID(t, rk, "2065").Best
		c.want.Run, c.want.Note = got.Run, got.Note
		if diff := cmp.Diff(c.want, got, cmpopts.IgnoreUnexported(Figures{})); diff != "" {
			t.Errorf("%s: best figures (-want +got):\n%s", c.name, diff)
		}
	}
}

// The order of two units: evidence first; then by recoverable share of wall; without
// evidence by fallback share, fallback dispatches, and id.
func TestCompareUnits(t *testing.T) {
	t.Parallel()
	u := func(id string, ev bool, pct, fb, fbDisp float64) UnitRank {
		return UnitRank{ID: id, Evidence: ev, Best: Figures{exactPct: pct, FallbackSharePct: fb, FallbackDispatchesPerToken: fbDisp}}
	}
	cases := []struct {
		name string
		a, b UnitRank
		want int
	}{
		{"evidence first", u("9", true, 1, 0, 0), u("1", false, 9, 9, 9), -1},
		{"evidence first, reversed", u("1", false, 9, 9, 9), u("9", true, 1, 0, 0), 1},
		{"more recoverable first", u("9", true, 5, 0, 0), u("1", true, 4, 9, 9), -1},
		{"less recoverable after", u("1", true, 4, 9, 9), u("9", true, 5, 0, 0), 1},
		{"equal recoverable: fallback share", u("9", true, 5, 3, 0), u("1", true, 5, 2, 9), -1},
		{"no evidence: recoverable ignored", u("9", false, 1, 3, 0), u("1", false, 9, 2, 9), -1},
		{"no evidence: smaller fallback after", u("1", false, 9, 2, 9), u("9", false, 1, 3, 0), 1},
		{"equal share: fallback dispatches", u("9", false, 0, 3, 5), u("1", false, 0, 3, 4), -1},
		{"equal share: fewer dispatches after", u("1", false, 0, 3, 4), u("9", false, 0, 3, 5), 1},
		{"all equal: by id", u("1", false, 0, 3, 4), u("9", false, 0, 3, 4), -1},
		{"all equal: by id, reversed", u("9", false, 0, 3, 4), u("1", false, 0, 3, 4), 1},
		{"the same unit", u("1", true, 2, 3, 4), u("1", true, 2, 3, 4), 0},
	}
	for _, c := range cases {
		if got := compareUnits(c.a, c.b); got != c.want {
			t.Errorf("%s: compareUnits = %d, want %d", c.name, got, c.want)
		}
	}
}

// With evidence, the best run is the one that recovers the most; on a tie, the larger
// reached share.
func TestBestWithEvidence(t *testing.T) {
	t.Parallel()
	f := func(run string, pct, reached float64) Figures {
		return Figures{Run: run, exactPct: pct, ReachedSharePct: reached}
	}
	cases := []struct {
		name string
		figs []Figures
		want string
	}{
		{"most recovered", []Figures{f("a", 1, 9), f("b", 3, 1), f("c", 2, 9)}, "b"},
		{"less recovered but more reached", []Figures{f("a", 3, 1), f("b", 2, 9)}, "a"},
		{"tie: more reached", []Figures{f("a", 3, 1), f("b", 3, 2)}, "b"},
		{"tie: equal reached keeps the first", []Figures{f("a", 3, 2), f("b", 3, 2)}, "a"},
	}
	for _, c := range cases {
		if got := best(c.figs, true).Run; got != c.want {
			t.Errorf("%s: best %s, want %s", c.name, got, c.want)
		}
	}
}

// Overrides at the ends of the order: a pin past the last place puts the unit last, and
// "before" the first unit moves it to the top.
func TestOverridesAtTheEnds(t *testing.T) {
	t.Parallel()
	ranking := func() *Ranking {
		rk := &Ranking{Order: []string{"a", "b", "c"}}
		for _, id := range rk.Order {
			rk.Units = append(rk.Units, UnitRank{ID: id})
		}
		return rk
	}
	cases := []struct {
		o     attrib.Override
		order string
		moved bool
	}{
		{attrib.Override{Unit: "a", Action: attrib.ActionPin, Position: 9}, "b c a", true},
		{attrib.Override{Unit: "b", Action: attrib.ActionPin, Position: 3}, "a c b", true},
		{attrib.Override{Unit: "c", Action: attrib.ActionPin, Position: 1}, "c a b", true},
		{attrib.Override{Unit: "c", Action: attrib.ActionBefore, Other: "a"}, "c a b", true},
		{attrib.Override{Unit: "a", Action: attrib.ActionBefore, Other: "c"}, "a b c", false},
		{attrib.Override{Unit: "a", Action: attrib.ActionAfter, Other: "c"}, "b c a", true},
		{attrib.Override{Unit: "c", Action: attrib.ActionAfter, Other: "a"}, "a b c", false},
		{attrib.Override{Unit: "a", Action: attrib.ActionBefore, Other: "nope"}, "a b c", false},
		{attrib.Override{Unit: "nope", Action: attrib.ActionPin, Position: 1}, "a b c", false},
	}
	for _, c := range cases {
		rk := ranking()
		rk.apply(c.o)
		var ids []string
		for _, u := range rk.Units {
			ids = append(ids, u.ID)
		}
		if got := strings.Join(rk.Order, " "); got != c.order || strings.Join(ids, " ") != c.order {
			t.Errorf("%+v: order %s, units %v; want %s", c.o, got, ids, c.order)
		}
		for _, u := range rk.Units {
			if u.ID == c.o.Unit && (u.Override == nil || u.Override.Moved != c.moved) {
				t.Errorf("%+v: override %+v, want moved=%v", c.o, u.Override, c.moved)
			}
		}
	}
}
