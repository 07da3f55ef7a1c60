package report

import (
	"fmt"
	"strings"

	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/results"
)

// BisectComment is the outcome of a bisection: on the issue or pull request that asked
// for it by hand, or on the regression issue of the change a nightly bisected; one
// comment per model and range, edited in place.
const BisectComment Kind = "bisect-comment" // data: BisectData

func init() {
	files[BisectComment] = "bisect-comment.md.tmpl"
	Kinds = append(Kinds, BisectComment)
}

// BisectPrefix starts every bisection comment's marker.
const BisectPrefix = "<!-- perfbot:bisect "

// BisectMarker is the hidden marker of the comment of one bisection: the model and the
// range's two ends (short SHAs). Characters that could end the comment are replaced.
func BisectMarker(model, good, bad string) string {
	return BisectPrefix + markerUnsafe.ReplaceAllString(model, "_") + " " +
		markerUnsafe.ReplaceAllString(strs.ShortSHA(good), "_") + ".." + markerUnsafe.ReplaceAllString(strs.ShortSHA(bad), "_") + " -->"
}

// BisectInput is what the bisection comment is made of: the manifest as the GPU host
// wrote it, the pull requests GitHub associates with the first bad commit, and the
// culprit's profile A/B (its port impact, as the compare comment shows it).
type BisectInput struct {
	Bisect results.Bisect
	// CommitURL links a commit of the range ("" leaves the SHAs unlinked).
	CommitURL func(sha string) string
	// PRs are the first bad commit's pull requests; PRNote says why none is listed
	// when they could not be asked for ("" when GitHub answered none).
	PRs    []Link
	PRNote string
	// Culprit is the profile A/B of the first bad commit against its parent: its
	// verdicts and its port impact; nil with CulpritNote when there is none.
	Culprit     *CompareInput
	CulpritNote string
	// Regression links the regression issue a nightly bisection belongs to, nil for
	// one asked by hand.
	Regression  *Link
	WorkflowRun *Link
	Notes       []string
	Errors      []string
}

// BisectData fills the bisection comment.
type BisectData struct {
	Marker      string
	Model       string
	Metric      string
	Host        string
	Date        string
	Good, Bad   Link // the range's ends, short SHAs
	Commits     int  // in the range, both ends included
	Outcome     string
	Headline    string
	FirstBad    *Link
	LastGood    *Link
	PRs         []Link
	PRNote      string
	Confidence  string
	Ends        string // the ends' change and its p
	Why         string
	Runs        string
	Posterior   []BisectRow
	State       string // "" when complete, else what stopped it
	Culprit     *CompareData
	CulpritNote string
	Regression  *Link
	Run         *Link
	Notes       []string
	Errors      []string
}

// BisectRow is one measured commit of the posterior table.
type BisectRow struct {
	Commit Link
	Runs   int
	PBad   string
	Side   string
}

// NewBisectData formats a bisection for its comment; it computes nothing of its own.
func NewBisectData(in BisectInput) BisectData {
	b := in.Bisect
	link := func(sha string) Link {
		l := Link{Text: strs.ShortSHA(sha)}
		if in.CommitURL != nil {
			l.URL = in.CommitURL(sha)
		}
		return l
	}
	d := BisectData{
		Marker: BisectMarker(b.Model, b.Good, b.Bad), Model: b.Model, Metric: b.Metric, Host: b.Host, Date: b.Date,
		Good: link(b.Good), Bad: link(b.Bad), Commits: len(b.Commits), PRs: in.PRs, PRNote: in.PRNote,
		CulpritNote: in.CulpritNote, Regression: in.Regression, Run: in.WorkflowRun, Notes: in.Notes, Errors: in.Errors,
	}
	d.Runs = fmt.Sprintf("%d single-model runs", b.Runs)
	if b.Params.Budget > 0 {
		d.Runs += fmt.Sprintf(" of a budget of %d", b.Params.Budget)
	}
	if b.Rejected > 0 {
		d.Runs += fmt.Sprintf("; %d attempts refused by the guard were redone", b.Rejected)
	}
	if b.State != results.SessionComplete {
		d.State = fmt.Sprintf("The bisection is %s, not complete", b.State)
		if b.Error != "" {
			d.State += ": " + b.Error
		}
		d.State += "; what it measured is shown."
	}
	o := b.Outcome
	if o == nil {
		d.Outcome = "none"
		d.Headline = "No outcome: the bisection stopped before its first measurement."
		return d
	}
	d.Outcome = o.Outcome
	if o.FirstBad != "" {
		d.Confidence = fmt.Sprintf("%.1f %%", o.Confidence*100)
	}
	d.Ends = fmt.Sprintf("%s between the good and the bad end, p = %s", pct2(o.ChangePct), pValue(o.EndsP))
	d.Why = o.Why
	if o.FirstBad != "" {
		fb, lg := link(o.FirstBad), link(o.LastGood)
		d.FirstBad, d.LastGood = &fb, &lg
	}
	for _, p := range o.Posterior {
		d.Posterior = append(d.Posterior, BisectRow{Commit: link(p.Commit), Runs: p.Runs, PBad: fmt.Sprintf("%.3f", p.PBad), Side: p.Side})
	}
	switch o.Outcome {
	case results.BisectFound:
		d.Headline = fmt.Sprintf("Found: the first bad commit is %s (confidence %s).", strs.ShortSHA(o.FirstBad), d.Confidence)
	case results.BisectUndecided:
		d.Headline = fmt.Sprintf("Undecided: the runs did not single out one commit; the most likely first bad commit is %s, at a confidence of only %s.", strs.ShortSHA(o.FirstBad), d.Confidence)
	default:
		d.Headline = "Not reproduced: the good and the bad end did not differ when measured again, so no commit is blamed."
	}
	if in.Culprit != nil {
		cd := NewCompareData(*in.Culprit)
		d.Culprit = &cd
	}
	return d
}

// BisectLine is the bisection's outcome in one line, for the regression issue's table.
func BisectLine(d BisectData) string {
	line := strings.TrimSuffix(d.Headline, ".")
	if d.FirstBad != nil && len(d.PRs) > 0 {
		var prs []string
		for _, p := range d.PRs {
			prs = append(prs, p.Text)
		}
		line += "; pull request " + strings.Join(prs, ", ")
	}
	return fmt.Sprintf("%s (%s, %d commits, %s)", line, d.Date, d.Commits, d.Runs)
}

// ConfirmLine is how an interleaved A/B of the last good commit (A) against the first
// bad one (B) came out, in one line: "A/B of 1a2b3c4d (8 runs) against 5e6f7a8b (8
// runs): -12.3 %, p = 0.0003 (Mann-Whitney U), slower".
func ConfirmLine(a, b string, r abstat.Result) string {
	line := fmt.Sprintf("A/B of %s (%d runs) against %s (%d runs): %+.1f %%", strs.ShortSHA(a), r.NA, strs.ShortSHA(b), r.NB, r.ChangePct)
	switch r.Test {
	case abstat.TestMannWhitney, abstat.TestWelch:
		p := r.P
		if r.AdjustedP > 0 {
			p = r.AdjustedP
		}
		name := "Mann-Whitney U"
		if r.Test == abstat.TestWelch {
			name = "Welch's t"
		}
		line += fmt.Sprintf(", p = %s (%s)", pValue(p), name)
	default:
		line += ", no test: " + r.Why
	}
	return line + ", " + string(r.Verdict)
}
