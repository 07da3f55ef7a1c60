package rank

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/results"
)

// On the maintainers' 2026-09-30 profile every unit's reach, fallback and dispatches
// in the ranking are the summaries' own port_units figures, and the rank table prints
// the summary's 46.79 % for the MoE port (docs/analysis.md §6).
func TestRankPrintsTheSummarysReachOnTheRealFolder(t *testing.T) {
	t.Parallel()
	sums := fixtureRuns(t)
	rk, err := Rank(sums, attrib.Default())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*results.Summary{}
	for _, s := range sums {
		byName[s.Name] = s
	}
	for _, u := range rk.Units {
		for _, f := range u.Runs {
			su, ok := byName[f.Run].PortUnits.Get(u.ID)
			if !ok {
				t.Fatalf("%s has no unit %s", f.Run, u.ID)
			}
			if f.ReachedSharePct != float64(su.ReachedDefaultSharePct) || f.FallbackSharePct != float64(su.FallbackSharePct) ||
				f.DispatchesPerTokenRemoved != float64(su.ReachedDefaultDispatchesPerToken) || f.FallbackDispatchesPerToken != float64(su.FallbackDispatchesPerToken) {
				t.Errorf("#%s in %s: ranking %v %% / %v %% / %v / %v, summary %v / %v / %v / %v", u.ID, f.Run,
					f.ReachedSharePct, f.FallbackSharePct, f.DispatchesPerTokenRemoved, f.FallbackDispatchesPerToken,
					su.ReachedDefaultSharePct, su.FallbackSharePct, su.ReachedDefaultDispatchesPerToken, su.FallbackDispatchesPerToken)
			}
		}
	}
	if row := rowOf(rk.Markdown(), "#2065"); !strings.Contains(row, "| `Qwen3-30B-A3B-4bit_greedy` | 46.79 % |") {
		t.Errorf("the MoE row does not print the summary's 46.79 %%: %s", row)
	}
}

// The rank table prints the summary's reach, never one re-added from rounded role
// shares: role shares 42.11 + 2.12 + 0.91 + 0.90 re-add to 46.04 where the analysis,
// from exact times, wrote 46.03. A summary figure that no rounding of the role
// figures can give is of other roles, and the re-added one stays.
func TestRankPrintsTheSummarysReachNotAReAddedOne(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		own, want float64
	}{{46.03, 46.03}, {46.06, 46.06}, {46.02, 46.02}, {46.01, 46.04}, {46.10, 46.04}, {45.98, 46.04}} {
		var qwen *results.Summary
		sums := fixtureRuns(t)
		for _, s := range sums {
			if strings.HasPrefix(s.Name, "Qwen3") {
				qwen = s
			}
		}
		for i, kv := range qwen.RoleSharePct {
			if v, ok := map[string]float64{"moe_expert_gemv": 42.11, "moe_weighted_sum": 2.12, "moe_activation": 0.91, "moe_gather_indices": 0.90}[kv.Key]; ok {
				qwen.RoleSharePct[i].Value = results.Num(v)
			}
		}
		for i := range qwen.PortUnits {
			if qwen.PortUnits[i].ID == "2065" {
				qwen.PortUnits[i].Unit.ReachedDefaultSharePct = results.Num(c.own)
				qwen.PortUnits[i].Unit.FallbackSharePct = results.Num(c.own)
			}
		}
		rk, err := Rank(sums, attrib.Default())
		if err != nil {
			t.Fatal(err)
		}
		moe := unitByID(t, rk, "2065")
		if moe.Best.ReachedSharePct != c.want || moe.Best.FallbackSharePct != c.want || moe.Best.FallbackNotReachedPct != 0 {
			t.Errorf("summary %v: reach %v, fallback %v, not reached %v; want %v", c.own, moe.Best.ReachedSharePct, moe.Best.FallbackSharePct, moe.Best.FallbackNotReachedPct, c.want)
		}
		if row := rowOf(rk.Markdown(), "#2065"); !strings.Contains(row, "| "+results.PyFloat(c.want)+" % |") {
			t.Errorf("summary %v: the row does not print %v %%: %s", c.own, c.want, row)
		}
	}
}
