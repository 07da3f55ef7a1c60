package baseline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// The metrics an A/B compares, each model's in this order. decode_ms is not one: the
// harness writes it as generated_tokens / decode_tok_s, so it would test the same
// readings twice and count twice in Holm's correction.
const (
	MetricDecode  = "decode tok/s"
	MetricPrefill = "prefill tok/s"
)

// ABMetric is one metric of one model in an A/B: abstat's comparison of B's repeats
// with A's (the test that decided, p, Holm's adjusted p, the medians, the change and
// its interval, the verdict and why) and its one-line text.
type ABMetric struct {
	Metric string `json:"metric"`
	abstat.Result
	Text string `json:"text"`
}

// ABResult is the A/B verdict for one model: B against A. Verdict is the decode tok/s
// comparison's (faster, slower, no significant change, too noisy to call, too few
// repeats), or no result / not compared; Metrics holds every metric compared.
type ABResult struct {
	Model   string     `json:"model"`
	Verdict Verdict    `json:"verdict"`
	A       *Point     `json:"a,omitempty"`
	B       *Point     `json:"b,omitempty"`
	Metrics []ABMetric `json:"metrics,omitempty"`
	Why     string     `json:"why,omitempty"` // why it was not compared
	Text    string     `json:"text"`
}

// ABReport compares two files of one commit (a configuration A/B) model by model.
// Tested is the number of comparisons that ran a test: Holm's correction is over them.
type ABReport struct {
	A          string         `json:"a"`
	B          string         `json:"b"`
	Options    abstat.Options `json:"options"`
	Tested     int            `json:"tested"`
	Results    []ABResult     `json:"models"`
	Superseded []Superseded   `json:"superseded,omitempty"`
}

// CompareAB compares b with a per model and metric with runner/abstat: a model's
// repeats in each file are the samples (the U test from 5 a side, Welch's t on 3 or 4,
// too few repeats below 3), and Holm's correction over every tested metric of every
// model decides the calls. Models of different environments are never compared. h
// (which may be nil) is only read for the superseded-baseline warning.
func CompareAB(a, b *benchcsv.File, h *History, o abstat.Options) (ABReport, error) {
	if err := o.Validate(); err != nil {
		return ABReport{}, err
	}
	rep := ABReport{A: a.Name.String(), B: b.Name.String(), Options: o}
	models := a.Models()
	for _, m := range b.Models() {
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	base := map[string]Point{}
	var rs []abstat.Result
	var dirs []abstat.Direction
	for _, model := range models {
		res, err := compareAB(a, b, model, o)
		if err != nil {
			return ABReport{}, err
		}
		if res.A != nil && res.Verdict != NotCompared {
			base[model] = *res.A
		}
		for _, m := range res.Metrics {
			rs, dirs = append(rs, m.Result), append(dirs, abstat.HigherIsBetter)
		}
		rep.Results = append(rep.Results, res)
	}
	held, err := abstat.CorrectHolm(rs, dirs, o)
	if err != nil {
		return ABReport{}, err
	}
	i := 0
	for k := range rep.Results {
		res := &rep.Results[k]
		for j := range res.Metrics {
			m := &res.Metrics[j]
			m.Result = held[i]
			i++
			m.Text = m.Result.Text()
			if m.Test != abstat.TestNone {
				rep.Tested++
			}
		}
		if len(res.Metrics) > 0 {
			res.Verdict, res.Text = Verdict(res.Metrics[0].Verdict), res.Metrics[0].Metric+": "+res.Metrics[0].Text
		}
	}
	if h != nil {
		until := b.Name.Date
		rep.Superseded = h.superseded(a.Name.Pair(), base, until, rep.B)
	}
	return rep, nil
}

func compareAB(a, b *benchcsv.File, model string, o abstat.Options) (ABResult, error) {
	res := ABResult{Model: model}
	pa, okA := PointOf(a, model)
	pb, okB := PointOf(b, model)
	if okA {
		res.A = &pa
	}
	if okB {
		res.B = &pb
	}
	switch {
	case okA && okB:
	case okA || okB:
		side := "B"
		if !okA {
			side = "A"
		}
		res.Verdict, res.Text = NoResult, "no measured row in "+side+": not compared"
		return res, nil
	default:
		res.Verdict, res.Text = NoResult, "no measured row in either file"
		return res, nil
	}
	if d := pa.Env.Diff(pb.Env); len(d) > 0 {
		res.Verdict, res.Why = NotCompared, "the environments differ: "+strings.Join(d, ", ")
		res.Text = "not compared: " + res.Why
		return res, nil
	}
	r, err := abstat.Compare(pa.Values, pb.Values, abstat.HigherIsBetter, o)
	if err != nil {
		return res, fmt.Errorf("%s: %s: %w", model, MetricDecode, err)
	}
	res.Metrics = append(res.Metrics, ABMetric{Metric: MetricDecode, Result: r})
	// Prefill only when every repeat on both sides has it: a test on part of the rows
	// would not be the same repeats as the decode one.
	preA, preB := prefillOf(a, pa), prefillOf(b, pb)
	if len(preA) == len(pa.Values) && len(preB) == len(pb.Values) {
		r, err := abstat.Compare(preA, preB, abstat.HigherIsBetter, o)
		if err != nil {
			return res, fmt.Errorf("%s: %s: %w", model, MetricPrefill, err)
		}
		res.Metrics = append(res.Metrics, ABMetric{Metric: MetricPrefill, Result: r})
	}
	return res, nil
}

// prefillOf is the prefill tok/s of p's rows of f that have one.
func prefillOf(f *benchcsv.File, p Point) []float64 {
	var v []float64
	for _, r := range f.Rows {
		if slices.Contains(p.Lines, r.Line) && r.HasPrefill {
			v = append(v, r.PrefillTokS)
		}
	}
	return v
}
