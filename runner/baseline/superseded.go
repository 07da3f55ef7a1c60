package baseline

import (
	"fmt"
	"slices"
	"strings"
)

// Superseded says a baseline reading has a newer one: a file of the same backend, host
// and harness measured the model after the baseline and before the run being judged, so
// comparing with the baseline would measure a stale row rather than a change.
type Superseded struct {
	Pair      string  `json:"pair"` // backend_host[_vlm], from the file names
	Model     string  `json:"model"`
	Baseline  string  `json:"baseline"`
	Date      string  `json:"date"`
	Was       float64 `json:"was"`
	Newer     string  `json:"newer"`
	NewerDate string  `json:"newer_date"`
	Now       float64 `json:"now"`
}

func (s Superseded) String() string {
	return fmt.Sprintf("%s: the baseline %s (%s, %s tok/s) is superseded by %s (%s, %s tok/s)",
		s.Model, s.Baseline, s.Date, tokS(s.Was), s.Newer, s.NewerDate, tokS(s.Now))
}

// superseded scans every file of pair, whatever the pair is (no list of known hosts):
// for each model of base, the newest reading dated after the baseline's and before
// until, in any file but the one judged (skip). Experiments and single-model runs count:
// a newer reading is newer wherever it was written.
func (h *History) superseded(pair string, base map[string]Point, until, skip string) []Superseded {
	newest := map[string]Superseded{}
	for _, f := range h.Files {
		n := f.Name
		if n.Pair() != pair || n.String() == skip || (until != "" && n.Date >= until) {
			continue
		}
		for model, b := range base {
			if n.Date <= b.Date || n.String() == b.File {
				continue
			}
			p, ok := PointOf(f, model)
			if !ok || p.Env != b.Env {
				continue
			}
			if cur, seen := newest[model]; seen && cur.NewerDate > n.Date {
				continue
			}
			newest[model] = Superseded{Pair: pair, Model: model, Baseline: b.File, Date: b.Date, Was: b.Value(),
				Newer: n.String(), NewerDate: n.Date, Now: p.Value()}
		}
	}
	out := make([]Superseded, 0, len(newest))
	for _, s := range newest {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Superseded) int { return strings.Compare(a.Model, b.Model) })
	return out
}

// SupersededIn finds, for every (backend, host) pair the history's file names show, the
// models whose newest nightly reading is older than a reading in another file of the
// pair (an experiment or a single-model run measured it since): the nightly baseline
// of those models is superseded until the next nightly run.
func (h *History) SupersededIn() []Superseded {
	var out []Superseded
	for _, pair := range h.Pairs() {
		last := h.Latest(pair)
		if last == nil {
			continue
		}
		base := map[string]Point{}
		for _, model := range last.Models() {
			if p, ok := PointOf(last, model); ok {
				base[model] = p
			}
		}
		out = append(out, h.superseded(pair, base, "", "")...)
	}
	return out
}
