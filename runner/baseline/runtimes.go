package baseline

import (
	"fmt"
	"slices"

	"github.com/lablup/perfbot/internal/mathx"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// DefaultMaxSpreadPct is the widest spread of a runtime's decode repeats, in percent of
// their median, that still gives a ratio between the runtimes (see SpreadPct).
const DefaultMaxSpreadPct = 10.0

// RuntimePair is one model measured by both runtimes of a night: mlxcel's harness and
// the mlx-lm baseline on the same build, host and day.
type RuntimePair struct {
	Model string `json:"model"`
	// Mlxcel and MlxLM are the runtimes' readings; nil when a runtime has none (Status
	// then holds its SKIP:/FAIL: token, when it wrote one).
	Mlxcel       *Point `json:"mlxcel,omitempty"`
	MlxLM        *Point `json:"mlx_lm,omitempty"`
	MlxcelStatus string `json:"mlxcel_status,omitempty"`
	MlxLMStatus  string `json:"mlx_lm_status,omitempty"`
	// DecodeRatio is mlxcel / mlx-lm; 0 without both readings, and 0 when a side's
	// repeats are not stable (Unstable says which).
	DecodeRatio  float64 `json:"decode_ratio,omitempty"`
	PrefillRatio float64 `json:"prefill_ratio,omitempty"`
	// Unstable names the sides ("mlxcel", "mlx-lm") whose decode repeats spread wider
	// than the threshold: the run did not settle, so no ratio is given.
	Unstable []string `json:"unstable,omitempty"`
}

// SpreadPct is the spread of the point's decode repeats: (largest - smallest) over
// their median, in percent; 0 for a single reading, which shows no spread.
func (p Point) SpreadPct() float64 {
	if len(p.Values) < 2 {
		return 0
	}
	m := mathx.Median(p.Values)
	if m <= 0 {
		return 0
	}
	return (slices.Max(p.Values) - slices.Min(p.Values)) / m * 100
}

// CompareRuntimes pairs the models of mlxcel's file with the baseline's (either may be
// nil), in mlxcel's order then the baseline's, and gives the median decode ratio over
// the models both measured with stable repeats (n of them). A side whose repeats
// spread more than maxSpreadPct (0 takes DefaultMaxSpreadPct) gets no ratio.
func CompareRuntimes(mlxcel, mlxlm *benchcsv.File, maxSpreadPct float64) (pairs []RuntimePair, medianRatio float64, n int) {
	if maxSpreadPct <= 0 {
		maxSpreadPct = DefaultMaxSpreadPct
	}
	var models []string
	seen := map[string]bool{}
	for _, f := range []*benchcsv.File{mlxcel, mlxlm} {
		if f == nil {
			continue
		}
		for _, m := range f.Models() {
			if !seen[m] {
				seen[m] = true
				models = append(models, m)
			}
		}
	}
	var ratios []float64
	for _, m := range models {
		p := RuntimePair{Model: m}
		p.Mlxcel, p.MlxcelStatus = reading(mlxcel, m)
		p.MlxLM, p.MlxLMStatus = reading(mlxlm, m)
		if p.Mlxcel != nil && p.MlxLM != nil && p.MlxLM.Value() > 0 {
			for _, side := range []struct {
				name string
				pt   *Point
			}{{"mlxcel", p.Mlxcel}, {"mlx-lm", p.MlxLM}} {
				if side.pt.SpreadPct() > maxSpreadPct {
					p.Unstable = append(p.Unstable, side.name)
				}
			}
			if len(p.Unstable) == 0 {
				p.DecodeRatio = p.Mlxcel.Value() / p.MlxLM.Value()
				if p.MlxLM.Prefill > 0 {
					p.PrefillRatio = p.Mlxcel.Prefill / p.MlxLM.Prefill
				}
				ratios = append(ratios, p.DecodeRatio)
			}
		}
		pairs = append(pairs, p)
	}
	return pairs, mathx.Median(ratios), len(ratios)
}

// Repeats lists the point's decode repeats as the CSV gives them ("7.65 / 8.22 /
// 11.16").
func (p Point) Repeats() string {
	s := ""
	for i, v := range p.Values {
		if i > 0 {
			s += " / "
		}
		s += fmt.Sprintf("%.2f", v)
	}
	return s
}

func reading(f *benchcsv.File, model string) (*Point, string) {
	if f == nil {
		return nil, ""
	}
	if p, ok := PointOf(f, model); ok {
		return &p, ""
	}
	if rows := f.RowsOf(model); len(rows) > 0 {
		return nil, rows[0].Status
	}
	return nil, ""
}
