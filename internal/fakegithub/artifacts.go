package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Artifact is an artifact a workflow run uploaded, as the fake lists it.
type Artifact struct {
	ID      int64
	Name    string
	Size    int64
	Expired bool
}

// AddArtifact records an artifact of run runID (one the fake created for a dispatch)
// and returns it with its id.
func (s *Server) AddArtifact(runID int64, a Artifact) (Artifact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[runID] == nil {
		return Artifact{}, fmt.Errorf("fakegithub: no run %d", runID)
	}
	s.nextID++
	a.ID = s.nextID
	if s.artifacts == nil {
		s.artifacts = map[int64][]Artifact{}
	}
	s.artifacts[runID] = append(s.artifacts[runID], a)
	return a, nil
}

// listRunArtifacts serves GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts,
// paged by per_page (at most 100) and page as GitHub pages it, with its Link header
// left out: a client reads total_count.
func listRunArtifacts(s *Server, c *call) (int, any, error) {
	r := c.repo
	q := c.r.URL.Query()
	per, page := 30, 1
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	all := s.artifacts[c.run.ID]
	out := []any{}
	for i := (page - 1) * per; i < len(all) && i < page*per; i++ {
		a := all[i]
		url := fmt.Sprintf("%s/repos/%s/%s/actions/artifacts/%d", s.api(), r.Owner, r.Name, a.ID)
		at := ts(c.run.Updated)
		out = append(out, map[string]any{
			"id": a.ID, "node_id": fmt.Sprintf("MDg6QXJ0aWZhY3Q%d", a.ID), "name": a.Name, "size_in_bytes": a.Size,
			"url": url, "archive_download_url": url + "/zip", "expired": a.Expired,
			"created_at": at, "updated_at": at, "expires_at": ts(c.run.Updated.Add(90 * 24 * time.Hour)),
		})
	}
	return http.StatusOK, map[string]any{"total_count": len(all), "artifacts": out}, nil
}
