package job

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/lablup/perfbot/internal/gitrun"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/abrun"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/changepoint"
	"github.com/lablup/perfbot/runner/results"
)

// nightSuspect is what the nightly knows of one suspect after its re-measure: the
// config's name of the model and, when the A/B ran, the last good commit.
type nightSuspect struct {
	cfgName string
	good    string
}

// historyCommit is a commit id as a history row may give it: 7 to 40 lowercase hex
// digits (a CSV is hostile: anything else is not looked up).
var historyCommit = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

// modelResult is model's comparison in rep.
func modelResult(rep *baseline.Report, model string) *baseline.ModelResult {
	for i := range rep.Models {
		if rep.Models[i].Model == model {
			return &rep.Models[i]
		}
	}
	return nil
}

// lastGood is the commit of the last good night: the night before the suspected
// change's range when the segments suspected it, else the newest earlier night of the
// model in tonight's environment (the comparison's baseline point); resolved in the
// checkout to a full SHA that is an ancestor of tonight's commit; why says why there is
// none.
func (b *bencher) lastGood(ctx context.Context, m *baseline.ModelResult) (good, why string) {
	var id, date string
	switch {
	case m != nil && m.Suspicion != nil:
		id, date = m.Suspicion.LastGood, m.Suspicion.GoodDate
	case m != nil && m.Baseline != nil:
		id, date = m.Baseline.Commit, m.Baseline.Date
	default:
		return "", "the history has no earlier night of the model"
	}
	if id == "" {
		return "", fmt.Sprintf("the night of %s does not name its commit", safetext.Clean(date))
	}
	if !historyCommit.MatchString(id) {
		return "", fmt.Sprintf("the night of %s names the commit %s, not 7 to 40 hex digits", safetext.Clean(date), safetext.Quote(id))
	}
	out, err := gitrun.Out(ctx, b.o.RepoDir, "rev-parse", "--verify", "--quiet", id+"^{commit}")
	if err != nil || !abrun.IsFullSHA(out) {
		if ctx.Err() != nil {
			return "", "stopped"
		}
		return "", fmt.Sprintf("the last good commit %s (the night of %s) is not in the checkout (a shallow clone? the nightly needs the history: fetch-depth 0), or its short id is ambiguous", id, safetext.Clean(date))
	}
	if out == b.man.Commit {
		return "", fmt.Sprintf("the night of %s measured tonight's commit %s already", safetext.Clean(date), strs.ShortSHA(out))
	}
	if _, err := gitrun.Out(ctx, b.o.RepoDir, "merge-base", "--is-ancestor", out, b.man.Commit); err != nil {
		return "", fmt.Sprintf("the last good commit %s (the night of %s) is not an ancestor of tonight's %s", strs.ShortSHA(out), safetext.Clean(date), strs.ShortSHA(b.man.Commit))
	}
	return out, ""
}

// configName is the config's name of the model folder, or "".
func (b *bencher) configName(model string) string {
	for _, m := range b.o.Config.Models {
		if modelFolder(m) == model {
			return m.Name
		}
	}
	return ""
}

// confirm re-measures a suspect: an interleaved A/B of the last good commit (A)
// against tonight's (B) for that model alone, into confirm-<model>/ below the nightly
// folder; when the last good commit is not known, or the A/B could not start, the
// single re-run of tonight's commit, with why in the reason.
func (b *bencher) confirm(ctx context.Context, model string, rep *baseline.Report) (results.Remeasure, nightSuspect, error) {
	ns := nightSuspect{cfgName: b.configName(model)}
	good, why := b.lastGood(ctx, modelResult(rep, model))
	if ctx.Err() != nil {
		return results.Remeasure{Model: model, Verdict: baseline.Suspected, Reason: "stopped before the re-measure"},
			ns, fmt.Errorf("%w before the re-measure of %s: %w", errInterrupted, model, context.Cause(ctx))
	}
	if why == "" && ns.cfgName == "" {
		why = "the config names no model in the folder " + model
	}
	if why != "" {
		return b.fallback(ctx, model, rep, ns, why)
	}
	dir := results.ConfirmDirPrefix + model
	b.prog.printf("%s: %s; confirming by an A/B of the last good commit %s (A) and tonight's %s (B) into %s/",
		model, suspectedWhy(modelResult(rep, model)), strs.ShortSHA(good), strs.ShortSHA(b.man.Commit), dir)
	crep, err := Compare(ctx, CompareOptions{
		Kind: results.CompareBench, Host: b.o.Host, RepoDir: b.o.RepoDir, ShaA: good, ShaB: b.man.Commit,
		Config: b.o.Config, Models: []string{ns.cfgName}, OutDir: b.o.OutDir,
		Folder: filepath.Join(b.folder, dir), LogDir: filepath.Join(b.logs, dir),
		Guard: b.o.Guard, Sandbox: b.o.Sandbox, Progress: b.o.Progress, Now: b.o.Now,
	})
	if crep.Folder == "" {
		if err != nil && stopped(ctx, err) {
			return results.Remeasure{Model: model, Verdict: baseline.Suspected, Reason: "stopped before the A/B measured"},
				ns, fmt.Errorf("%w during the A/B of %s: %w", errInterrupted, model, err)
		}
		return b.fallback(ctx, model, rep, ns, "the A/B could not start: "+b.scrub.text(fmt.Sprint(err)))
	}
	ns.good = good
	rm := results.Remeasure{Model: model, Verdict: baseline.Suspected, Confirm: dir, Since: since(modelResult(rep, model))}
	if err != nil {
		if stopped(ctx, err) {
			rm.Reason = "stopped during the A/B"
			return rm, ns, fmt.Errorf("%w during the A/B of %s: %w", errInterrupted, model, err)
		}
		rm.Reason = cleanLine(b.scrub.text("the A/B failed: " + err.Error()))
		b.prog.printf("%s: %s; the suspect stays unconfirmed", model, rm.Reason)
		return rm, ns, nil
	}
	cm, ok := crep.Compare.Model(model)
	if !ok || !cm.Done || len(cm.Results) == 0 {
		rm.Reason = "the A/B ended without a decision"
		return rm, ns, nil
	}
	dec := cm.Results[0].Result
	rm.Decode = dec.MedianB
	m := modelResult(rep, model)
	want := abstat.Slower
	if m != nil && m.Verdict == baseline.SuspectedUp {
		want = abstat.Faster
	}
	ab := fmt.Sprintf("the A/B of %s (last good) and %s (tonight) over %d+%d runs: decode tok/s %s, %+.1f %% (p %.3g)",
		strs.ShortSHA(good), strs.ShortSHA(b.man.Commit), dec.NA, dec.NB, dec.Verdict, dec.ChangePct, dec.AdjustedP)
	switch {
	case dec.Verdict == want && want == abstat.Slower:
		rm.Verdict = baseline.Regression
	case dec.Verdict == want:
		rm.Verdict = baseline.Improvement
	default:
		rm.Verdict = baseline.NotConfirmed
		rm.Reason = cleanLine("not confirmed: " + ab)
	}
	if m != nil {
		m.Verdict = rm.Verdict
		m.Text = cleanLine(m.Text + "; " + ab)
	}
	b.prog.printf("%s: %s: %s", model, rm.Verdict, ab)
	return rm, ns, nil
}

// suspectedWhy says what made the suspicion, for the progress lines.
func suspectedWhy(m *baseline.ModelResult) string {
	if m != nil && m.Suspicion != nil {
		return fmt.Sprintf("off its current segment since %s (%+.1f %%, z = %.1f)", m.Suspicion.Since, m.Suspicion.ChangePct, m.Suspicion.Z)
	}
	return "outside its noise band"
}

// since is the first night of the suspected change when the segments suspected it.
func since(m *baseline.ModelResult) string {
	if m != nil && m.Suspicion != nil {
		return m.Suspicion.Since
	}
	return ""
}

// fallback is the single re-run of tonight's commit, the reason saying why there was
// no A/B.
func (b *bencher) fallback(ctx context.Context, model string, rep *baseline.Report, ns nightSuspect, why string) (results.Remeasure, nightSuspect, error) {
	why = cleanLine("no A/B (" + why + "): re-measured by a single re-run of tonight's commit")
	b.prog.printf("%s: %s", model, why)
	rm, err := b.remeasure(ctx, model, rep)
	if rm.Reason == "" {
		rm.Reason = why
	} else {
		rm.Reason = cleanLine(rm.Reason + "; " + why)
	}
	return rm, ns, err
}

// bisectAll bisects, within the budget nightly.bisect_runs, every regression the A/B
// confirmed whose range holds more than one commit, each into bisect-<model>/ below
// the nightly folder.
func (b *bencher) bisectAll(ctx context.Context, suspects map[string]nightSuspect) error {
	spent := 0
	for _, rm := range b.man.Remeasures {
		ns := suspects[rm.Model]
		if rm.Verdict != baseline.Regression || rm.Confirm == "" || ns.good == "" {
			continue
		}
		nb, runs, err := b.bisect(ctx, rm.Model, ns, spent)
		spent += runs
		b.man.Bisects = append(b.man.Bisects, nb)
		if err := b.step(err); err != nil {
			return err
		}
	}
	return nil
}

// bisect bisects one confirmed regression; runs are the single-model runs it took.
func (b *bencher) bisect(ctx context.Context, model string, ns nightSuspect, spent int) (results.NightBisect, int, error) {
	nb := results.NightBisect{Model: model, Good: ns.good, Bad: b.man.Commit}
	budget := b.o.Config.Nightly.BisectRuns
	p := changepoint.DefaultBisectParams()
	skip := func(why string) (results.NightBisect, int, error) {
		nb.Reason = why
		b.prog.printf("%s: not bisected: %s", model, why)
		return nb, 0, nil
	}
	switch {
	case budget == 0:
		return skip("nightly.bisect_runs is 0: the nightly bisects nothing")
	case budget-spent < 2*p.EndRuns:
		return skip(fmt.Sprintf("the budget of %d runs (nightly.bisect_runs) has %d left, fewer than the %d both ends take", budget, budget-spent, 2*p.EndRuns))
	}
	commits, err := BisectRange(ctx, b.o.RepoDir, ns.good, b.man.Commit, DefaultBisectMaxCommits)
	if err != nil {
		if ctx.Err() != nil {
			return nb, 0, fmt.Errorf("%w before the bisection of %s: %w", errInterrupted, model, err)
		}
		return skip(cleanLine(b.scrub.text("the range could not be listed: " + err.Error())))
	}
	if len(commits) == 2 {
		return skip(fmt.Sprintf("the range %s..%s holds one commit: tonight's is the first bad one", strs.ShortSHA(ns.good), strs.ShortSHA(b.man.Commit)))
	}
	p.Budget = budget - spent
	dir := results.BisectDirPrefix + model
	b.prog.printf("%s: bisecting the %d commits after %s into %s/, at most %d runs", model, len(commits)-1, strs.ShortSHA(ns.good), dir, p.Budget)
	rep, err := BisectSession(ctx, BisectOptions{
		Host: b.o.Host, RepoDir: b.o.RepoDir, Good: ns.good, Bad: b.man.Commit, Config: b.o.Config, Model: ns.cfgName,
		Params: p, OutDir: b.o.OutDir, Folder: filepath.Join(b.folder, dir), LogDir: filepath.Join(b.logs, dir),
		Guard: b.o.Guard, Sandbox: b.o.Sandbox, Progress: b.o.Progress, Now: b.o.Now,
	})
	if rep.Folder != "" {
		nb.Dir = dir
	}
	runs := rep.Bisect.Runs
	if err != nil {
		if stopped(ctx, err) {
			nb.Reason = "interrupted: " + cleanLine(b.scrub.text(err.Error()))
			return nb, runs, fmt.Errorf("%w during the bisection of %s: %w", errInterrupted, model, err)
		}
		nb.Reason = "failed: " + cleanLine(b.scrub.text(err.Error()))
		b.prog.printf("%s: bisection %s", model, nb.Reason)
		return nb, runs, nil
	}
	if o := rep.Bisect.Outcome; o != nil && o.Outcome == results.BisectFound {
		b.prog.printf("%s: the first bad commit is %s", model, o.FirstBad)
	}
	return nb, runs, nil
}
