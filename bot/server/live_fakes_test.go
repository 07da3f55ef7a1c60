package server

import (
	"context"

	"github.com/lablup/perfbot/bot/gh"
)

// The live status's calls, for the in-memory GitHub of the parts' tests.

func (f *fakeGitHub) StartCheckRun(_ context.Context, _ gh.Repo, id int64, _ gh.CheckProgress) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.startErr != nil {
		return f.startErr
	}
	cr, err := held(f.checkRuns, id)
	if err != nil {
		return err
	}
	cr.Status = "in_progress"
	f.checkRuns[id] = cr
	return nil
}

func (f *fakeGitHub) RunArtifacts(context.Context, gh.Repo, int64) ([]gh.Artifact, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.artifactLists++
	return nil, nil
}

func (f *fakeGitHub) UpdateCommentUnless(ctx context.Context, r gh.Repo, id int64, body string, keep func(string) bool) (gh.Comment, gh.Action, error) {
	f.mu.Lock()
	c, err := held(f.comments, id)
	if f.updateErr != nil {
		err = f.updateErr
	}
	f.mu.Unlock()
	if err != nil {
		return c, "", err
	}
	if keep != nil && keep(c.Body) {
		return c, gh.Kept, nil
	}
	return f.UpdateComment(ctx, r, id, body)
}
