package job

import (
	"context"
	"path/filepath"

	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/results"
)

// culprit runs, when the bisection found the first bad commit, a profile compare of
// its parent (A) against it (B) for the model, with the config's first sampling
// setting (one profiled run a side), into the bisection folder's culprit/: which
// kernels got slower, and in which port units. A compare that could not run, or
// failed, is recorded as the reason and the bisection stands; an interruption is
// returned.
func (b *bisecter) culprit(ctx context.Context) error {
	out := b.man.Outcome
	if out == nil || out.Outcome != results.BisectFound {
		return nil
	}
	switch {
	case b.o.NoCulprit:
		b.man.CulpritReason = "not run: the caller turned the culprit's profile A/B off"
	case len(b.o.Config.Sampling) == 0:
		b.man.CulpritReason = "not run: the config has no sampling setting to profile with"
	}
	if b.man.CulpritReason != "" {
		return b.step(nil)
	}
	b.prog.printf("profile A/B of the first bad commit %s against its parent %s into %s/",
		strs.ShortSHA(out.FirstBad), strs.ShortSHA(out.LastGood), results.CulpritDir)
	rep, err := Compare(ctx, CompareOptions{
		Kind: results.CompareProfile, Host: b.o.Host, RepoDir: b.o.RepoDir, ShaA: out.LastGood, ShaB: out.FirstBad,
		Config: b.o.Config, Models: []string{b.o.Model}, Sampling: b.o.Config.Sampling[:1], OutDir: b.o.OutDir,
		Folder: filepath.Join(b.folder, results.CulpritDir), LogDir: filepath.Join(b.logs, results.CulpritDir),
		Guard: b.o.Guard, Every: b.o.Every, Sandbox: b.o.Sandbox, Progress: b.o.Progress, Now: b.o.Now,
	})
	if rep.Folder != "" {
		b.man.Culprit = results.CulpritDir
	}
	if err != nil {
		b.man.CulpritReason = cleanLine(b.scrub.text("the culprit's profile A/B: " + err.Error()))
		b.prog.printf("%s", b.man.CulpritReason)
		if stopped(ctx, err) {
			return b.step(err)
		}
		return b.step(nil)
	}
	for _, d := range rep.Compare.Diffs {
		b.prog.printf("culprit %s: the kernels' difference is in %s/%s", strs.ShortSHA(out.FirstBad), results.CulpritDir, d.Markdown)
	}
	return b.step(nil)
}
