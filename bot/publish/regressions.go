package publish

import (
	"fmt"
	"math"
	"path"
	"regexp"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/changepoint"
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
	changes := p.changeIssues(pair)
	for _, ci := range changes {
		st.Want = append(st.Want, ci.Issue)
	}
	st.Issues = func(open map[string]gh.Issue) []IssueStep {
		var out []IssueStep
		for i, m := range c.Models {
			if !p.changes.byBand(m.Model) {
				continue // the change points decide (changeIssues)
			}
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
		for _, ci := range changes {
			if cur, ok := open[ci.Key]; ok {
				ci.Current = &cur
			} else if ci.Close != "" {
				continue // nothing open to close
			}
			out = append(out, ci)
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
	body, err := renderLinked(report.RegressionIssue, d, p.files, l.Root)
	return body, notes, err
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

var fileUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]`)

func regressionFileName(model string) string { return fileUnsafe.ReplaceAllString(model, "_") }

// changeIssues are the issues of the change points: one per regression, opened while it
// is open and edited each night, closed with a comment once a later segment is back
// at the level before it or a maintainer accepted it.
func (p *BaselinePlan) changeIssues(pair string) []IssueStep {
	if p.changes == nil {
		return nil
	}
	var out []IssueStep
	for _, mc := range p.changes.Models {
		open := mc.Res.Open()
		for _, c := range mc.Res.Changes {
			if c.Kind != changepoint.Regression || !reportable(mc.Res, c, mc.Params) {
				continue
			}
			key := regressionFileName(mc.Model) + "_" + c.Date
			is := IssueStep{Issue: Issue{Key: key, Marker: changeMarker(pair, mc.Model, c.Date), File: dryRegression + key + ".md",
				Title: fmt.Sprintf("Nightly: decode regression of %s on %s from %s (%+.1f%%)", mc.Model, p.n.man.Host, c.Date, c.ChangePct)},
				Name: mc.Model}
			prev, had := mc.Issues[c.Date]
			switch c.State {
			case changepoint.Open:
				// The newest open regression is the one tonight's verdict links.
				is.Link = c.Date == open[len(open)-1].Date
			case changepoint.Closed:
				if !had || prev.State == "closed" {
					continue
				}
				is.Close = fmt.Sprintf("Closing: from %s %s is back at the level before this regression (%.2f tok/s, within %g %% of %.2f or better). perfbot opens a new issue if it drops again.",
					mc.Nights[c.ClosedAt].Date, mc.Model, segmentAt(mc.Res, c.ClosedAt).Level, mc.Params.SamePct, c.From)
			case changepoint.Accepted:
				if !had || prev.State == "closed" {
					continue
				}
				is.Close = fmt.Sprintf("Closing: a maintainer accepted %.2f tok/s as the normal level of %s; later nights are judged against it.", c.To, mc.Model)
			}
			is.Body = func(l Links) (string, []string, error) { return p.changeBody(l, is.Marker, mc, c) }
			if v := mc.Bisects[c.Date]; v != nil && c.State == changepoint.Open {
				is.Comments = append(is.Comments, IssueComment{Marker: v.data.Marker, File: dryRegression + key + dryBisect, What: "bisection comment of " + mc.Model,
					Body: func(Links) (string, error) {
						md, err := v.render(nil)
						md, _ = fitComment("bisection comment", md, p.o.Config.Limits.CommentMaxBytes)
						return md, err
					}})
			}
			out = append(out, is)
		}
	}
	return out
}

// changeBody is the issue of one regression change point.
func (p *BaselinePlan) changeBody(l Links, marker string, mc *modelChanges, c changepoint.Change) (string, []string, error) {
	state := string(c.State)
	var text string
	switch c.State {
	case changepoint.Open:
		text = fmt.Sprintf("Open: the current level of %s is %.2f tok/s. The issue closes by itself when a later segment is back within %g %% of %.2f tok/s.", mc.Model, mc.Res.Current().Level, mc.Params.SamePct, c.From)
	case changepoint.Closed:
		text = fmt.Sprintf("Closed: from %s the level was back at %.2f tok/s.", mc.Nights[c.ClosedAt].Date, segmentAt(mc.Res, c.ClosedAt).Level)
	case changepoint.Accepted:
		text = fmt.Sprintf("Accepted by a maintainer (label %s): %.2f tok/s is the normal level from %s.", AcceptedLabel, c.To, c.Date)
	}
	d := report.RegressionData{
		Marker: marker, Model: mc.Model, Host: p.n.man.Host, GFX: p.n.man.GFX, Date: p.n.man.Date, FirstSeen: c.Date,
		Page: l.Link(path.Base(p.pagePath), p.pagePath),
		Change: &report.RegressionChange{
			Since: c.Date, From: fmt.Sprintf("%.2f", c.From), To: fmt.Sprintf("%.2f", c.To), ChangePct: fmt.Sprintf("%+.1f%%", c.ChangePct),
			Nights: nightRange(mc.Nights, c.RangeFrom, c.RangeTo), LastGood: c.LastGood, FirstBad: c.FirstBad,
			Found: mc.Found[c.Date], Checks: mc.checks(c.Date), State: state, StateText: text, Latest: mc.Text,
		},
	}
	if r := mc.Runs[len(mc.Runs)-1]; r.Date == p.n.man.Date && len(r.Lines) > 0 {
		d.Row = l.Link(r.File, path.Join(p.o.Config.Results.Benchmarks, r.File))
		d.Row.URL += fmt.Sprintf("#L%d", r.Lines[0])
	}
	if d.Change.Found == "" {
		d.Change.Found = "unknown"
	}
	body, err := renderLinked(report.RegressionIssue, d, p.files, l.Root)
	return body, nil, err
}

// addChanges puts the change-point section on the baseline page.
func (p *BaselinePlan) addChanges(in *report.BaselineInput) {
	if p.changes == nil {
		return
	}
	in.Changes, in.Creep = p.changes.changeRows()
	params := changepoint.DefaultParams()
	if len(p.changes.Models) > 0 {
		params = p.changes.Models[0].Params
	}
	in.CreepDays, in.CreepPct = params.CreepDays, params.CreepPct
}
