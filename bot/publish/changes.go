package publish

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/changepoint"
	"github.com/lablup/perfbot/runner/results"
)

// AcceptedLabel is report.AcceptedLabel: `/perfbot accept` puts it on a regression
// issue, and the publish reads it from GitHub.
const AcceptedLabel = report.AcceptedLabel

// changeMarkerRe reads a change's issue marker: the pair, the model (as the marker
// spells it) and the first night of the change.
var changeMarkerRe = regexp.MustCompile(`<!-- perfbot:regression ([A-Za-z0-9._+-]+) ([A-Za-z0-9._+-]+) ([0-9]{4}-[0-9]{2}-[0-9]{2}) -->`)

// changeMarker is the hidden marker of the one issue of one change of a model: the
// per-model marker with the date of the change's first night.
func changeMarker(pair, model, date string) string {
	return strings.TrimSuffix(report.RegressionMarker(pair, model), " -->") + " " + date + " -->"
}

// markerModel is the model as a marker spells it.
func markerModel(model string) string {
	m := report.RegressionMarker("p", model)
	return strings.TrimSuffix(strings.TrimPrefix(m, report.RegressionPrefix+"p "), " -->")
}

// modelChanges is the change-point analysis of one model's nightly history.
type modelChanges struct {
	Model  string
	Nights []changepoint.Point
	Runs   []baseline.Point
	Params changepoint.Params
	Res    changepoint.Result
	// Found says how each change (by its first night) was confirmed.
	Found map[string]string
	// Issues are the change issues found on GitHub, by the change's first night.
	Issues map[string]gh.Issue
	// Checks say how a change (by its first night) was confirmed and bisected tonight;
	// the earlier nights' are kept in its issue (checks).
	Checks map[string]report.RegressionChecks
	// Bisects are tonight's bisections of the model's changes, by the change's first
	// night: each gets its comment on the change's issue.
	Bisects map[string]*bisectView
	// Unconfirmed says why tonight's suspicion was not confirmed ("" when there is
	// none, or it was).
	Unconfirmed string
	// Tonight is tonight's verdict from the analysis.
	Verdict baseline.Verdict
	Text    string
}

// checks are how the change of date was confirmed and bisected: tonight's, else what
// its issue kept from the night it was.
func (mc *modelChanges) checks(date string) report.RegressionChecks {
	c := mc.Checks[date]
	if is, ok := mc.Issues[date]; ok {
		if kept, err := report.ParseRegressionChecks(is.Body); err == nil {
			c.Confirmation = orText(c.Confirmation, kept.Confirmation)
			c.Bisection = orText(c.Bisection, kept.Bisection)
		}
	}
	return c
}

// changeAnalysis is the change-point analysis of every model tonight measured.
type changeAnalysis struct {
	Models []*modelChanges
	// Band are the models whose history is too short for segments: the noise band
	// decides for them, and their issue is the per-model one.
	Band map[string]bool
}

func (a *changeAnalysis) byBand(model string) bool { return a == nil || a.Band[model] }

// markedIssues lists the issues (open and closed) whose body holds prefix, from GitHub
// or from an earlier dry run's files.
func markedIssues(ctx context.Context, s Sink, prefix string) ([]gh.Issue, error) {
	switch s := s.(type) {
	case githubSink:
		l, ok := s.api.(interface {
			IssuesWithMarker(ctx context.Context, r gh.Repo, marker, state string) ([]gh.Issue, error)
		})
		if !ok {
			return nil, fmt.Errorf("the GitHub client cannot list closed issues")
		}
		return l.IssuesWithMarker(ctx, s.repo, prefix, "all")
	case dirSink:
		names, err := filepath.Glob(filepath.Join(s.dir, dryRegression+"*.md"))
		if err != nil {
			return nil, err
		}
		var out []gh.Issue
		for _, name := range names {
			if strings.HasSuffix(name, dryClosed) {
				continue
			}
			b, err := infile.ReadFile(name, 1<<20)
			if err != nil || !strings.Contains(string(b), prefix) {
				continue
			}
			is := gh.Issue{Body: string(b), URL: filepath.Base(name), State: "open"}
			if _, err := os.Lstat(strings.TrimSuffix(name, ".md") + dryClosed); err == nil {
				is.State = "closed"
			}
			out = append(out, is)
		}
		return out, nil
	}
	return nil, nil
}

// dryClosed ends the name of the file a dry run writes for closing an issue: the
// comment it closes with.
const dryClosed = ".closed.md"

// closeIssue posts the issue's closing comment and closes it, after its body was
// written (w).
func closeIssue(ctx context.Context, s Sink, is Issue, w Written) (Outcome, error) {
	switch s := s.(type) {
	case githubSink:
		c, ok := s.api.(interface {
			CloseIssue(ctx context.Context, r gh.Repo, cur gh.Issue, comment string) (gh.Issue, gh.Action, error)
		})
		if !ok {
			return Outcome{Action: "failed"}, fmt.Errorf("the GitHub client cannot close issues")
		}
		got, action, err := c.CloseIssue(ctx, s.repo, gh.Issue{Number: int(w.Number), State: "open"}, is.Close)
		if err != nil {
			return Outcome{Action: "failed", Number: w.Number, Error: err.Error()}, err
		}
		return Outcome{Action: string(action), Number: int64(got.Number), URL: got.URL}, nil
	case dirSink:
		name := strings.TrimSuffix(is.File, ".md") + dryClosed
		action, err := s.write(name, is.Close)
		if action != "failed" {
			action = "closed"
		}
		o := Outcome{Action: action, URL: name}
		if err != nil {
			o.Error = err.Error()
		}
		return o, err
	}
	return Outcome{Action: "skipped", Detail: "this sink does not close issues"}, nil
}

// analyseChanges runs the change-point analysis of every model of tonight's mlxcel CSV
// over the history (with tonight), with the changes the earlier nights' issues
// confirmed and the ones a maintainer accepted, and sets tonight's verdict of each
// model analysed in the plan's copy of the comparison.
func (p *BaselinePlan) analyseChanges(ctx context.Context) *changeAnalysis {
	c := p.n.man.Comparison
	if c == nil || p.n.mlxcel == nil {
		return nil
	}
	pair := "rocm_" + p.n.man.Host
	a := &changeAnalysis{Band: map[string]bool{}}
	var issues []gh.Issue
	read := false
	params := changepoint.DefaultParams()
	if p.o.Config.Nightly.CreepPct > 0 {
		params.CreepPct = p.o.Config.Nightly.CreepPct
	}
	models := slices.Clone(c.Models)
	for i, m := range models {
		nights, runs, ok := baseline.NightPoints(p.history, p.n.mlxcel, m.Model)
		if !ok || !baseline.BySegments(len(nights), params) {
			a.Band[m.Model] = true
			continue
		}
		if !read {
			// Read once, and only when a model has the history for segments.
			read = true
			var err error
			if issues, err = markedIssues(ctx, p.o.Sink, report.RegressionPrefix+markerModel(pair)+" "); err != nil {
				p.sum.Notes = append(p.sum.Notes, "reading the regression issues: "+err.Error()+"; no change was taken as confirmed by an issue")
			}
		}
		mc := &modelChanges{Model: m.Model, Nights: nights, Runs: runs, Params: params, Found: map[string]string{}, Issues: map[string]gh.Issue{},
			Checks: map[string]report.RegressionChecks{}, Bisects: map[string]*bisectView{}}
		for _, is := range issues {
			g := changeMarkerRe.FindStringSubmatch(is.Body)
			if g == nil || g[1] != markerModel(pair) || g[2] != markerModel(m.Model) {
				continue
			}
			mc.Issues[g[3]] = is
			mc.Params.Confirmed = append(mc.Params.Confirmed, g[3])
			mc.Found[g[3]] = "confirmed on an earlier night (this issue)"
			if slices.Contains(is.Labels, AcceptedLabel) {
				mc.Params.Accepted = append(mc.Params.Accepted, g[3])
			}
		}
		res, err := changepoint.Detect(nights, mc.Params)
		if err != nil {
			p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("the change points of %s: %v; the noise band decides", m.Model, err))
			a.Band[m.Model] = true
			continue
		}
		// A suspicion of tonight is confirmed by its re-measure: the interleaved A/B of
		// the last good commit against the first bad one when it ran (a significant
		// change in the same direction), else the single re-run of tonight's commit
		// falling on the same side of the band again.
		if j := res.Newest; j.Suspected() && !j.FromSegmentation {
			date := nights[j.Index].Date
			ok, how := p.confirmation(m, j)
			mc.Checks[date] = report.RegressionChecks{Confirmation: how}
			if ok {
				mc.Params.Confirmed = append(mc.Params.Confirmed, date)
				mc.Found[date] = fmt.Sprintf("the newest night(s) against the current segment (z = %.1f), confirmed on %s by the re-measure of %s alone", j.Z, p.n.man.Date, m.Model)
				if r2, err := changepoint.Detect(nights, mc.Params); err == nil {
					res = r2
				}
			} else {
				mc.Unconfirmed = how
			}
		}
		for _, ch := range res.Changes {
			if _, ok := mc.Found[ch.Date]; !ok {
				mc.Found[ch.Date] = fmt.Sprintf("the segmentation of the history (z = %.1f, %d night(s) at the new level)", ch.Z, segmentAt(res, ch.Index).Nights())
				if _, ok := mc.Checks[ch.Date]; !ok {
					mc.Checks[ch.Date] = report.RegressionChecks{Confirmation: "by the nights at the new level alone: the segmentation found it, no re-measure was needed"}
				}
			}
		}
		mc.Res = res
		p.nightBisects(ctx, mc)
		mc.Verdict, mc.Text = tonightVerdict(mc)
		models[i].Verdict, models[i].Text = mc.Verdict, mc.Text
		if m.New != nil {
			// Against the current segment's level (Detect takes only positive readings,
			// so the level is above 0), not the band's median.
			models[i].ChangePct = (m.New.Value()/res.Current().Level - 1) * 100
		}
		a.Models = append(a.Models, mc)
	}
	cc := *c
	cc.Models = models
	p.n.man.Comparison = &cc
	return a
}

// reportable says a change is large enough to report: its segments' medians differ by
// at least MinChangePct (the segmentation tests the means of the logarithms, which an
// odd night can pull further than the medians move).
// A regression that only takes the level back to where it was before the gain just
// before it ends that gain: it is shown with the gain, not reported as a regression.
func reportable(r changepoint.Result, c changepoint.Change, p changepoint.Params) bool {
	if math.Abs(c.ChangePct) < p.MinChangePct {
		return false
	}
	if c.Kind != changepoint.Regression {
		return true
	}
	for i, prev := range r.Changes {
		if prev.Index == c.Index && i > 0 && r.Changes[i-1].Kind == changepoint.Improvement {
			gain := r.Changes[i-1]
			return !(math.Abs(c.To/gain.From-1)*100 <= p.SamePct)
		}
	}
	return true
}

// segmentAt is the segment that starts at night i (the last one when none does).
func segmentAt(r changepoint.Result, i int) changepoint.Segment {
	for _, s := range r.Segments {
		if s.Start == i {
			return s
		}
	}
	return r.Current()
}

// tonightVerdict is the model's verdict tonight from its analysis: a regression while
// the change that started the current segment is an open regression, an improvement
// on the night a gain is confirmed, a suspicion while the newest nights are off the
// current segment and not confirmed, else no significant change.
func tonightVerdict(mc *modelChanges) (baseline.Verdict, string) {
	res := mc.Res
	cur := res.Current()
	last := mc.Nights[len(mc.Nights)-1]
	tonight := fmt.Sprintf("tonight %.2f tok/s; the current segment has %d night(s) from %s at %.2f tok/s (noise %.2f %% a night)", last.V(), cur.Nights(), cur.First, cur.Level, res.SigmaPct)
	if j := res.Newest; j.Suspected() {
		v := baseline.Suspected
		if j.Status == changepoint.SuspectedImprove {
			v = baseline.SuspectedUp
		}
		why := j.Why
		if mc.Unconfirmed != "" {
			why += "; not confirmed: " + mc.Unconfirmed
		}
		return v, why + "; " + tonight
	}
	for _, c := range res.Changes {
		if c.Index != cur.Start || !reportable(mc.Res, c, mc.Params) {
			continue
		}
		switch {
		case c.Kind == changepoint.Regression && c.State == changepoint.Open:
			return baseline.Regression, fmt.Sprintf("the open regression from %s (%+.1f %%, %.2f to %.2f tok/s) goes on: %s", c.Date, c.ChangePct, c.From, c.To, tonight)
		case c.Kind == changepoint.Improvement && c.Date == last.Date:
			return baseline.Improvement, fmt.Sprintf("a gain from %s (%+.1f %%, %.2f to %.2f tok/s), confirmed by %s", c.Date, c.ChangePct, c.From, c.To, mc.Found[c.Date])
		}
	}
	return baseline.NoChange, "within the noise of the current segment: " + tonight
}

// changeRows are the change-point section of the baseline page.
func (a *changeAnalysis) changeRows() (rows []report.ChangeRow, creep []string) {
	if a == nil {
		return nil, nil
	}
	for _, mc := range a.Models {
		for _, c := range mc.Res.Changes {
			if !reportable(mc.Res, c, mc.Params) {
				continue
			}
			row := report.ChangeRow{Model: mc.Model, Date: c.Date, Change: fmt.Sprintf("%+.1f%% (%.2f to %.2f tok/s)", c.ChangePct, c.From, c.To),
				Nights: nightRange(mc.Nights, c.RangeFrom, c.RangeTo), Commits: commitRange(c.LastGood, c.FirstBad), State: "gain"}
			if c.Kind == changepoint.Regression {
				row.State = string(c.State)
				if c.State == changepoint.Closed && c.ClosedAt >= 0 {
					row.Text = fmt.Sprintf("the regression from %s closed: the level was back from %s", c.Date, mc.Nights[c.ClosedAt].Date)
				}
				if is, ok := mc.Issues[c.Date]; ok && is.URL != "" && strings.HasPrefix(is.URL, "http") {
					row.Issue = &report.Link{Text: fmt.Sprintf("#%d", is.Number), URL: is.URL}
				}
				row.Text = checksText(row.Text, mc.checks(c.Date))
			}
			rows = append(rows, row)
		}
		if j := mc.Res.Newest; j.Suspected() && !j.FromSegmentation {
			rows = append(rows, report.ChangeRow{Model: mc.Model, Date: mc.Nights[j.Index].Date, Change: fmt.Sprintf("%+.1f%%", j.ChangePct),
				Nights: nightRange(mc.Nights, j.RangeFrom, j.RangeTo), Commits: commitRange(j.LastGood, j.FirstBad), State: string(j.Status), Text: checksText(j.Why, report.RegressionChecks{Confirmation: mc.Unconfirmed})})
		}
		if cr := mc.Res.Creep; cr.Creeping {
			creep = append(creep, fmt.Sprintf("%s: the current segment (from %s, %.2f tok/s) is %.1f %% below the best segment of the period (%s to %s, %.2f tok/s)",
				mc.Model, cr.Current.First, cr.Current.Level, cr.GapPct, cr.Best.First, cr.Best.Last, cr.Best.Level))
		}
	}
	return rows, creep
}

func nightRange(n []changepoint.Point, from, to int) string {
	if from == to {
		return n[from].Date
	}
	return n[from].Date + " to " + n[to].Date
}

func commitRange(good, bad string) string {
	if good == "" && bad == "" {
		return "unknown"
	}
	return orUnknown(strs.ShortSHA(good)) + ".." + orUnknown(strs.ShortSHA(bad))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// checksText adds how a change was confirmed and bisected to a change row's text.
func checksText(text string, c report.RegressionChecks) string {
	var parts []string
	if text != "" {
		parts = append(parts, text)
	}
	if c.Confirmation != "" {
		parts = append(parts, "confirmation: "+c.Confirmation)
	}
	if c.Bisection != "" {
		parts = append(parts, "bisection: "+c.Bisection)
	}
	return strings.Join(parts, "; ")
}

// remeasureOf is tonight's re-measure of model, nil when it had none.
func remeasureOf(n results.Nightly, model string) *results.Remeasure {
	for i := range n.Remeasures {
		if n.Remeasures[i].Model == model {
			return &n.Remeasures[i]
		}
	}
	return nil
}

// confirmation says whether tonight's re-measure of a suspected change of m confirms
// it, and how it came out, in words. With an interleaved A/B (Remeasure.Confirm) it
// does when the A/B calls a significant change of decode tok/s in the suspicion's
// direction; without one, when the single re-run of tonight's commit fell on the same
// side of the band again (the nightly comparison's verdict).
func (p *BaselinePlan) confirmation(m baseline.ModelResult, j changepoint.Judgement) (bool, string) {
	regression := j.Status == changepoint.SuspectedRegression
	rm := remeasureOf(p.n.man, m.Model)
	if rm == nil || rm.Confirm == "" {
		ok := regression && m.Verdict == baseline.Regression || !regression && m.Verdict == baseline.Improvement
		switch {
		case rm == nil:
			return ok, fmt.Sprintf("no re-measure of %s ran on %s", m.Model, p.n.man.Date)
		case rm.Decode <= 0:
			return ok, fmt.Sprintf("a single re-run of %s on %s, not an A/B, gave no reading (%s)", m.Model, p.n.man.Date, orText(rm.Reason, "no reason given"))
		}
		return ok, fmt.Sprintf("a single re-run of %s at tonight's commit on %s, not an A/B (the last good commit was not known): %.2f tok/s, %s", m.Model, p.n.man.Date, rm.Decode, orText(string(rm.Verdict), "no verdict"))
	}
	r, a, b, err := p.readConfirm(rm)
	if err != nil {
		p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("the A/B that re-measured %s: %v; the suspicion is not confirmed", m.Model, err))
		return false, "the A/B that re-measured it could not be read: " + err.Error()
	}
	line := report.ConfirmLine(a, b, r.Result)
	want := abstat.Faster
	if regression {
		want = abstat.Slower
	}
	if r.Verdict != want {
		return false, line + ": not a significant change in the suspected direction"
	}
	return true, line
}

// readConfirm reads the A/B of a re-measure (results.ReadNightlyConfirm: the folder
// confirm-<model> below the nightly folder, not a link, a bench compare of the model
// alone) whose B must be tonight's commit (A is the last good one the GPU job found),
// and its decode tok/s result.
func (p *BaselinePlan) readConfirm(rm *results.Remeasure) (r results.CompareResult, a, b string, err error) {
	d, err := results.ReadNightlyConfirm(p.n.dir, *rm)
	if err != nil {
		return r, "", "", err
	}
	if !sameCommit(d.ShaB, p.n.man.Commit) {
		return r, "", "", fmt.Errorf("it compares %s against %s, not the last good commit against tonight's %s", strs.ShortSHA(d.ShaB), strs.ShortSHA(d.ShaA), orUnknown(strs.ShortSHA(p.n.man.Commit)))
	}
	cm, _ := d.Model(rm.Model)
	for _, res := range cm.Results {
		if res.Metric == baseline.MetricDecode {
			return res, d.ShaA, d.ShaB, nil
		}
	}
	return r, "", "", fmt.Errorf("it has no %s result of %s (the session is %s)", baseline.MetricDecode, rm.Model, d.State)
}

// sameCommit says two commit ids name the same commit, one possibly abbreviated; an
// unknown one ("") agrees with any.
func sameCommit(x, y string) bool {
	if x == "" || y == "" {
		return true
	}
	if len(x) > len(y) {
		x, y = y, x
	}
	return strings.HasPrefix(y, x)
}

// nightBisects attaches tonight's bisections of the model (Nightly.Bisects) to the
// regression changes they bisected: the one whose range they have, else the newest
// open one. A bisection that did not run says why; one that cannot be read is a note.
func (p *BaselinePlan) nightBisects(ctx context.Context, mc *modelChanges) {
	for _, nb := range p.n.man.Bisects {
		if nb.Model != mc.Model {
			continue
		}
		date := ""
		for _, c := range mc.Res.Changes {
			if c.Kind == changepoint.Regression && (sameCommit(c.LastGood, nb.Good) && sameCommit(c.FirstBad, nb.Bad) || date == "" && c.State == changepoint.Open) {
				date = c.Date
			}
		}
		if date == "" {
			p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("the bisection of %s (%s..%s) belongs to no regression of its history: not published", mc.Model, strs.ShortSHA(nb.Good), strs.ShortSHA(nb.Bad)))
			continue
		}
		ch := mc.Checks[date]
		if nb.Dir == "" {
			ch.Bisection = fmt.Sprintf("not run on %s: %s", p.n.man.Date, orText(nb.Reason, "no reason given"))
			mc.Checks[date] = ch
			continue
		}
		bf, err := p.readNightBisect(nb)
		if err != nil {
			p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("the bisection of %s: %v; not published", mc.Model, err))
			ch.Bisection = "ran on " + p.n.man.Date + ", but its results could not be read: " + err.Error()
			mc.Checks[date] = ch
			continue
		}
		v, notes := p.o.bisectView(ctx, bf)
		p.sum.Notes = append(p.sum.Notes, notes...)
		mc.Bisects[date] = v
		ch.Bisection = report.BisectLine(v.data) + "; the bisection comment on this issue has the details"
		mc.Checks[date] = ch
	}
}

// readNightBisect reads a nightly's bisection (results.ReadNightBisect: the folder
// bisect-<model> below the nightly folder, not a link, bisecting the range the manifest
// says) with its culprit A/B.
func (p *BaselinePlan) readNightBisect(nb results.NightBisect) (*bisectFolder, error) {
	if _, err := results.ReadNightBisect(p.n.dir, nb); err != nil {
		return nil, err
	}
	return readBisectFolder(filepath.Join(p.n.dir, nb.Dir))
}
