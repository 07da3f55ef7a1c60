package publish

import (
	"fmt"
	"math"
	"path"
	"regexp"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/baseline"
)

// dryRegression starts the name of the file a dry run writes for a regression issue:
// regression-<model>.md.
const dryRegression = "regression-"

// regressionsStep opens or updates one issue per confirmed regression, and updates the
// open issues of models that are back inside their band tonight.
func (p *BaselinePlan) regressionsStep() IssuesStep {
	c := p.n.man.Comparison
	pair := "rocm_" + p.n.man.Host
	st := IssuesStep{Prefix: report.RegressionPrefix + pair + " "}
	for _, m := range c.Models {
		key := regressionFileName(m.Model)
		st.Want = append(st.Want, Issue{Key: key, Marker: report.RegressionMarker(pair, m.Model), File: dryRegression + key + ".md"})
	}
	st.Issues = func(open map[string]gh.Issue) []IssueStep {
		var out []IssueStep
		for i, m := range c.Models {
			cur, isOpen := open[st.Want[i].Key]
			switch {
			case m.Verdict == baseline.Regression:
			case isOpen && m.New != nil && m.Band != nil && m.Verdict != baseline.Suspected && m.Verdict != baseline.SuspectedUp:
				// Measured and judged tonight, and not a regression: back inside the
				// band. Said once; the issue then waits for a maintainer.
				if nights, _ := report.ParseRegressionNights(cur.Body); len(nights) > 0 &&
					nights[0].Verdict != string(baseline.Regression) && nights[0].Date != p.n.man.Date {
					continue
				}
			default:
				continue
			}
			is := IssueStep{Issue: st.Want[i], Name: m.Model, Link: m.Verdict == baseline.Regression}
			is.Title = fmt.Sprintf("Nightly: decode regression of %s on %s", m.Model, p.n.man.Host)
			if isOpen {
				is.Current = &cur
			}
			is.Body = func(l Links) (string, []string, error) { return p.regressionBody(l, is.Marker, m, cur.Body) }
			out = append(out, is)
		}
		return out
	}
	return st
}

// regressionBody is the regression issue of one model, carrying on the nights of the
// open issue's body (earlier).
func (p *BaselinePlan) regressionBody(l Links, marker string, m baseline.ModelResult, earlier string) (string, []string, error) {
	var notes []string
	prev, err := report.ParseRegressionNights(earlier)
	if err != nil {
		notes = append(notes, err.Error()+"; its history starts over")
	}
	night := report.RegressionNight{Date: p.n.man.Date, Decode: round2(m.New.Value()), Median: round2(m.Band.Median), Verdict: string(m.Verdict), Page: l.Root + p.pagePath}
	if l.Root == "" {
		night.Page = ""
	}
	if m.Remeasure != nil {
		night.Remeasure = round2(m.Remeasure.Value())
	}
	nights := report.MergeRegressionNights(prev, night)
	first := nights[len(nights)-1].Date
	for _, nt := range nights {
		if nt.Verdict == string(baseline.Regression) && nt.Date < first {
			first = nt.Date
		}
	}
	var latest report.VerdictRow
	for _, r := range p.verdictRows(l) {
		if r.Model == m.Model {
			latest = r
		}
	}
	d := report.RegressionData{
		Marker: marker, Model: m.Model, Host: p.n.man.Host, GFX: p.n.man.GFX, Date: p.n.man.Date, FirstSeen: first,
		Persisting: m.Verdict == baseline.Regression, Latest: latest, Page: l.Link(path.Base(p.pagePath), p.pagePath),
		Row: l.Link(m.New.File, path.Join(p.o.Config.Results.Benchmarks, m.New.File)), Nights: nights,
	}
	d.Row.URL += fmt.Sprintf("#L%d", m.New.Lines[0])
	body, err := report.Render(report.RegressionIssue, d)
	if err == nil {
		err = validateLinks(body, p.files, l.Root)
	}
	return body, notes, err
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

var fileUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]`)

func regressionFileName(model string) string { return fileUnsafe.ReplaceAllString(model, "_") }
