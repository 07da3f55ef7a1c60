package gh

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Artifact is an artifact a workflow run uploaded.
type Artifact struct {
	ID      int64
	Name    string
	Size    int64
	Expired bool
}

// maxArtifactPages bounds the listing of a run's artifacts: perfbot's workflows upload
// two or three, so 3 pages of 100 are far more than a run of theirs holds.
const maxArtifactPages = 3

// RunArtifacts lists the artifacts of a workflow run, at most maxArtifactPages pages of
// 100 (a run with more is listed up to there, without an error: the caller looks for
// one by name).
func (c *Client) RunArtifacts(ctx context.Context, r Repo, runID int64) ([]Artifact, error) {
	op := fmt.Sprintf("listing the artifacts of workflow run %d in %s", runID, r)
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if runID <= 0 {
		return nil, fmt.Errorf("%s: want a positive run id", op)
	}
	opts := &github.ListOptions{PerPage: 100}
	var out []Artifact
	for page := 1; page <= maxArtifactPages; page++ {
		opts.Page = page
		list, _, err := c.api().Actions.ListWorkflowRunArtifacts(c.ctx(ctx), r.Owner, r.Name, runID, opts)
		if err != nil {
			return nil, wrap(err, op, needActionsRead)
		}
		for _, a := range list.Artifacts {
			out = append(out, Artifact{ID: a.GetID(), Name: a.GetName(), Size: a.GetSizeInBytes(), Expired: a.GetExpired()})
		}
		if len(list.Artifacts) < opts.PerPage || int64(len(out)) >= list.GetTotalCount() {
			break
		}
	}
	return out, nil
}

// ArtifactURL is the page of an artifact on GitHub, where a person downloads it: the
// run's page (its html_url) followed by /artifacts/ID. It is "" without a run page or
// an id.
func ArtifactURL(runURL string, id int64) string {
	if runURL == "" || id <= 0 {
		return ""
	}
	return fmt.Sprintf("%s/artifacts/%d", strings.TrimRight(runURL, "/"), id)
}

// FindArtifact returns the first artifact that is not expired and whose name is
// exactly one of names, else the first whose name starts with prefix (when prefix is
// not empty).
func FindArtifact(list []Artifact, prefix string, names ...string) (Artifact, bool) {
	for _, n := range names {
		for _, a := range list {
			if !a.Expired && a.Name == n {
				return a, true
			}
		}
	}
	if prefix != "" {
		for _, a := range list {
			if !a.Expired && strings.HasPrefix(a.Name, prefix) {
				return a, true
			}
		}
	}
	return Artifact{}, false
}
