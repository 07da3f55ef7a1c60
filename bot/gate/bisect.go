package gate

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/changepoint"
	"github.com/lablup/perfbot/runner/results"
)

// refusal is a denial found while pinning: its reason and reply.
type refusal struct {
	reason Reason
	reply  string
}

// BisectParams are the knobs of a bisection the gate counts runs with: the
// bisection's defaults with the config's budget, limits.max_bisect_runs.
func BisectParams(cfg config.Config) changepoint.BisectParams {
	p := changepoint.DefaultBisectParams()
	if cfg.Limits.MaxBisectRuns > 0 {
		p.Budget = cfg.Limits.MaxBisectRuns
	}
	return p
}

// MaxBisectCommits is the longest range a bisection may take under cfg, both ends
// included: limits.max_bisect_commits, never more than results.MaxBisectCommits.
func MaxBisectCommits(cfg config.Config) int {
	n := cfg.Limits.MaxBisectCommits
	if n <= 0 {
		n = config.Default().Limits.MaxBisectCommits
	}
	return min(n, results.MaxBisectCommits)
}

// pinBisect fixes the range of /bench rocm bisect into req: both SHAs resolved, the
// bad commit on the default branch, the good one its ancestor (so on the default
// branch too: a bisection is of the default branch's history, and no maintainer's
// full SHA widens that), the range within limits.max_bisect_commits and the runs it
// needs at the least within limits.max_bisect_runs. A refusal is returned, not an
// error.
func (p *pinner) pinBisect(ctx context.Context, cmd command.Command, cfg config.Config, req *Request) (*refusal, error) {
	ev := p.ev
	var full [2]string
	for i, s := range []struct{ key, ref string }{{"good", cmd.Good}, {"bad", cmd.Bad}} {
		sha, err := p.api.CommitSHA(ctx, ev.Repo, s.ref)
		if errors.Is(err, gh.ErrNotFound) || isStatus(err, http.StatusUnprocessableEntity) {
			return &refusal{ReasonRef, fmt.Sprintf("%s has no commit %s (or the short SHA is ambiguous). Name a commit of the default branch %s with `%s=`, or its full 40-digit SHA.",
				ev.Repo, code(s.ref), code(ev.DefaultBranch), s.key)}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("resolving commit %s: %w", s.ref, err)
		}
		full[i] = sha
	}
	good, bad := full[0], full[1]
	if good == bad {
		return &refusal{ReasonBisect, fmt.Sprintf("good= and bad= are the same commit, %s: a bisection needs the last good commit before the first bad one.", code(good))}, nil
	}
	on, err := p.api.Contains(ctx, ev.Repo, ev.DefaultBranch, bad)
	if err != nil && !errors.Is(err, gh.ErrNotFound) {
		return nil, fmt.Errorf("checking commit %s: %w", bad, err)
	}
	if !on {
		return &refusal{ReasonBisect, fmt.Sprintf("Commit %s (bad=) is not on the default branch %s: a bisection is of the default branch's history. Name commits of %s.",
			code(bad), code(ev.DefaultBranch), code(ev.DefaultBranch))}, nil
	}
	cmp, err := p.api.Compare(ctx, ev.Repo, good, bad)
	if errors.Is(err, gh.ErrNotFound) {
		return &refusal{ReasonRef, fmt.Sprintf("GitHub could not compare %s with %s in %s.", code(good), code(bad), ev.Repo)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("comparing %s with %s: %w", good, bad, err)
	}
	rng := code(strs.ShortSHA(good) + ".." + strs.ShortSHA(bad))
	switch cmp.Status {
	case "ahead":
	case "behind":
		return &refusal{ReasonBisect, fmt.Sprintf("The good commit %s is newer than the bad one %s (%d commits after it): swap them, good= the older.",
			code(good), code(bad), cmp.BehindBy)}, nil
	case "identical":
		return &refusal{ReasonBisect, fmt.Sprintf("good= and bad= are the same commit, %s: a bisection needs the last good commit before the first bad one.", code(good))}, nil
	default:
		return &refusal{ReasonBisect, fmt.Sprintf("The good commit %s is not an ancestor of the bad one %s, so %s is not a range of the default branch's history (is %s on %s?). Name good= on the default branch before bad=.",
			code(good), code(bad), rng, code(good), code(ev.DefaultBranch))}, nil
	}
	commits := cmp.AheadBy + 1
	if max := MaxBisectCommits(cfg); commits > max {
		return &refusal{ReasonBisect, fmt.Sprintf("The range %s holds %d commits (both ends, and merged commits, included); a bisection takes at most %d (limits.max_bisect_commits of the config). Name a narrower range.",
			rng, commits, max)}, nil
	}
	bp := BisectParams(cfg)
	if need := bp.MinRuns(commits); need > bp.Budget {
		return &refusal{ReasonBisect, fmt.Sprintf("The range %s of %d commits needs at least %d single-model runs to name its first bad commit (%d at each end, then %d at each of %d commits between), more than the %d of limits.max_bisect_runs of the config. Name a narrower range, or raise the limit.",
			rng, commits, need, bp.EndRuns, bp.Start, (need-2*bp.EndRuns)/bp.Start, bp.Budget)}, nil
	}
	req.SHA, req.PinnedFrom = bad, "commit "+bad+" (bad=)"
	req.Base, req.BasePinnedFrom = good, "commit "+good+" (good=)"
	req.Commits, req.MaxRuns, req.MinRuns = commits, bp.Budget, bp.MinRuns(commits)
	return nil, nil
}
