package baseline

import (
	"github.com/lablup/perfbot/runner/benchcsv"
)

// RuntimePair is one model measured by both runtimes of a night: mlxcel's harness and
// the mlx-lm baseline on the same build, host and day.
type RuntimePair struct {
	Model string `json:"model"`
	// Mlxcel and MlxLM are the runtimes' readings; nil when a runtime has none (Status
	// then holds its SKIP:/FAIL: token, when it wrote one).
	Mlxcel       *Point  `json:"mlxcel,omitempty"`
	MlxLM        *Point  `json:"mlx_lm,omitempty"`
	MlxcelStatus string  `json:"mlxcel_status,omitempty"`
	MlxLMStatus  string  `json:"mlx_lm_status,omitempty"`
	DecodeRatio  float64 `json:"decode_ratio,omitempty"` // mlxcel / mlx-lm; 0 without both
	PrefillRatio float64 `json:"prefill_ratio,omitempty"`
}

// CompareRuntimes pairs the models of mlxcel's file with the baseline's (either may be
// nil), in mlxcel's order then the baseline's, and gives the median decode ratio over
// the models both measured (n of them).
func CompareRuntimes(mlxcel, mlxlm *benchcsv.File) (pairs []RuntimePair, medianRatio float64, n int) {
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
			p.DecodeRatio = p.Mlxcel.Value() / p.MlxLM.Value()
			if p.MlxLM.Prefill > 0 {
				p.PrefillRatio = p.Mlxcel.Prefill / p.MlxLM.Prefill
			}
			ratios = append(ratios, p.DecodeRatio)
		}
		pairs = append(pairs, p)
	}
	return pairs, median(ratios), len(ratios)
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
