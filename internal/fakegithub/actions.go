package fakegithub

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Run is a workflow run the fake created for a dispatch. Whoever plays the runner moves
// it along with SetRun.
type Run struct {
	ID          int64
	Repo        string
	Workflow    string // the workflow's file name
	Title       string // display_title: the workflow's run-name for these inputs
	Branch      string
	HeadSHA     string
	Status      string // queued, in_progress, completed
	Conclusion  string // success, failure, cancelled, once completed
	Created     time.Time
	Updated     time.Time
	CancelAsked bool
}

// SetRun moves a run to status (and conclusion, when completed).
func (s *Server) SetRun(id int64, status, conclusion string) (Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	if r == nil {
		return Run{}, fmt.Errorf("fakegithub: no run %d", id)
	}
	r.Status, r.Conclusion, r.Updated = status, conclusion, time.Now().UTC().Truncate(time.Second)
	return *r, nil
}

// newRun records the run a dispatch starts; the caller holds s.mu.
func (s *Server) newRun(r *Repo, d *Dispatch, title string) {
	s.nextID++
	sha, _ := branchHead(r, strings.TrimPrefix(d.Ref, "refs/heads/"))
	now := time.Now().UTC().Truncate(time.Second)
	run := &Run{ID: s.nextID, Repo: d.Repo, Workflow: d.Workflow, Title: title, Branch: strings.TrimPrefix(d.Ref, "refs/heads/"),
		HeadSHA: sha, Status: "queued", Created: now, Updated: now}
	if s.runs == nil {
		s.runs = map[int64]*Run{}
	}
	s.runs[run.ID] = run
	d.RunID = run.ID
}

func (s *Server) runJSON(r *Repo, run *Run) map[string]any {
	base := s.api() + "/repos/" + r.Owner + "/" + r.Name
	url := fmt.Sprintf("%s/actions/runs/%d", base, run.ID)
	var conclusion any
	if run.Conclusion != "" {
		conclusion = run.Conclusion
	}
	return map[string]any{
		"id": run.ID, "node_id": fmt.Sprintf("WFR_%d", run.ID), "name": run.Workflow, "display_title": run.Title,
		"head_branch": run.Branch, "head_sha": run.HeadSHA, "path": ".github/workflows/" + run.Workflow,
		"run_number": run.ID, "run_attempt": 1, "event": "workflow_dispatch", "status": run.Status, "conclusion": conclusion,
		"workflow_id": 1, "url": url, "html_url": fmt.Sprintf("http://github.invalid/%s/%s/actions/runs/%d", r.Owner, r.Name, run.ID),
		"created_at": ts(run.Created), "updated_at": ts(run.Updated), "run_started_at": ts(run.Created),
		"jobs_url": url + "/jobs", "logs_url": url + "/logs", "check_suite_url": "", "artifacts_url": url + "/artifacts",
		"cancel_url": url + "/cancel", "rerun_url": url + "/rerun", "workflow_url": base + "/actions/workflows/1",
		"pull_requests": []any{}, "head_commit": nil, "repository": s.repoJSON(r), "head_repository": s.repoJSON(r),
	}
}

func listWorkflowRuns(s *Server, c *call) (int, any, error) {
	r := c.repo
	q := c.r.URL.Query()
	var since time.Time
	if created := strings.TrimPrefix(q.Get("created"), ">="); created != "" {
		var err error
		if since, err = time.Parse(time.RFC3339, created); err != nil {
			return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: created %q", q.Get("created"))
		}
	}
	var list []*Run
	for _, run := range s.runs {
		if run.Workflow == c.arg("workflow") && strings.EqualFold(run.Repo, r.Owner+"/"+r.Name) && !run.Created.Before(since) &&
			(q.Get("event") == "" || q.Get("event") == "workflow_dispatch") && (q.Get("status") == "" || q.Get("status") == run.Status) {
			list = append(list, run)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID > list[j].ID }) // newest first
	out := []any{}
	for _, run := range list {
		out = append(out, s.runJSON(r, run))
	}
	return 200, map[string]any{"total_count": len(out), "workflow_runs": out}, nil
}

func getRun(s *Server, c *call) (int, any, error) {
	return http.StatusOK, s.runJSON(c.repo, c.run), nil
}

func cancelRun(s *Server, c *call) (int, any, error) {
	run := c.run
	if run.Status == "completed" {
		return 0, nil, fail(http.StatusConflict, "Cannot cancel a workflow run that is completed.")
	}
	run.CancelAsked = true
	return http.StatusAccepted, map[string]any{}, nil
}

// resolve turns a branch name or a (possibly short) SHA into a full commit SHA.
func resolve(r *Repo, ref string) (string, bool) {
	if sha, ok := branchHead(r, ref); ok {
		return sha, true
	}
	if r.GitDir == "" || strings.HasPrefix(ref, "-") || len(ref) < 4 || strings.Trim(ref, "0123456789abcdef") != "" {
		return "", false
	}
	out, err := exec.Command("git", "--git-dir", r.GitDir, "rev-parse", "--verify", "--quiet", ref+"^{commit}").Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

func getCommit(s *Server, c *call) (int, any, error) {
	r := c.repo
	sha, ok := resolve(r, c.arg("ref"))
	if !ok {
		return 0, nil, fail(http.StatusUnprocessableEntity, "No commit found for SHA: %s", c.arg("ref"))
	}
	if strings.HasSuffix(c.r.Header.Get("Accept"), ".sha") {
		return 200, rawSHA(sha), nil
	}
	return 200, s.commitJSON(r, sha), nil
}

// rawSHA is an answer that is the SHA as plain text (the vnd.github.sha media type).
type rawSHA string

func compare(s *Server, c *call) (int, any, error) {
	r := c.repo
	baseRef, headRef, ok := strings.Cut(c.arg("basehead"), "...")
	base, ok1 := resolve(r, baseRef)
	head, ok2 := resolve(r, headRef)
	if !ok || !ok1 || !ok2 {
		return 0, nil, errNotFound
	}
	count := func(a, b string) int {
		out, _ := exec.Command("git", "--git-dir", r.GitDir, "rev-list", "--count", a+".."+b).Output()
		n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		return n
	}
	ahead, behind := count(base, head), count(head, base)
	status := "diverged"
	switch {
	case ahead == 0 && behind == 0:
		status = "identical"
	case behind == 0:
		status = "ahead"
	case ahead == 0:
		status = "behind"
	}
	mb, _ := exec.Command("git", "--git-dir", r.GitDir, "merge-base", base, head).Output()
	return 200, map[string]any{
		"url": "", "html_url": "", "permalink_url": "", "diff_url": "", "patch_url": "", "status": status,
		"ahead_by": ahead, "behind_by": behind, "total_commits": ahead, "commits": []any{},
		"base_commit": s.commitJSON(r, base), "merge_base_commit": s.commitJSON(r, strings.TrimSpace(string(mb))),
	}, nil
}

func getContents(s *Server, c *call) (int, any, error) {
	r := c.repo
	ref := c.r.URL.Query().Get("ref")
	if ref == "" {
		ref = r.DefaultBranch
	}
	sha, ok := resolve(r, ref)
	file := strings.Trim(c.arg("path"), "/")
	if !ok || strings.HasPrefix(file, "-") || strings.Contains(file, "..") {
		return 0, nil, errNotFound
	}
	data, err := exec.Command("git", "--git-dir", r.GitDir, "cat-file", "blob", sha+":"+file).Output()
	if err != nil {
		return 0, nil, errNotFound
	}
	blob, _ := exec.Command("git", "--git-dir", r.GitDir, "rev-parse", sha+":"+file).Output()
	url := fmt.Sprintf("%s/repos/%s/%s/contents/%s?ref=%s", s.api(), r.Owner, r.Name, file, ref)
	return 200, map[string]any{
		"type": "file", "encoding": "base64", "size": len(data), "name": path.Base(file), "path": file,
		"content": base64.StdEncoding.EncodeToString(data), "sha": strings.TrimSpace(string(blob)),
		"url": url, "git_url": url, "html_url": url, "download_url": url,
		"_links": map[string]any{"git": url, "html": url, "self": url},
	}, nil
}

func listChecksForRef(s *Server, c *call) (int, any, error) {
	r := c.repo
	sha, _ := resolve(r, c.arg("ref"))
	var ids []int64
	for id, cr := range s.checks {
		if cr.HeadSHA == sha && (c.r.URL.Query().Get("check_name") == "" || c.r.URL.Query().Get("check_name") == cr.Name) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	out := []any{}
	for _, id := range ids {
		out = append(out, s.checkJSON(r, s.checks[id]))
	}
	return 200, map[string]any{"total_count": len(out), "check_runs": out}, nil
}

func getCheck(s *Server, c *call) (int, any, error) {
	return http.StatusOK, s.checkJSON(c.repo, c.check), nil
}

// commitJSON describes a commit of the repository's git directory.
func (s *Server) commitJSON(r *Repo, sha string) map[string]any {
	url := fmt.Sprintf("%s/repos/%s/%s/commits/%s", s.api(), r.Owner, r.Name, sha)
	out, _ := exec.Command("git", "--git-dir", r.GitDir, "log", "-1", "--format=%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha).Output()
	f := strings.SplitN(string(out), "\x00", 9)
	for len(f) < 9 {
		f = append(f, "")
	}
	parents := []any{}
	for _, p := range strings.Fields(f[1]) {
		parents = append(parents, map[string]any{"sha": p, "url": url})
	}
	person := func(name, email, date string) map[string]any {
		return map[string]any{"name": name, "email": email, "date": date}
	}
	return map[string]any{
		"sha": sha, "node_id": "C_" + sha, "url": url, "html_url": url, "comments_url": url + "/comments",
		"author": nil, "committer": nil, "parents": parents,
		"commit": map[string]any{"url": url, "message": strings.TrimSpace(f[8]), "comment_count": 0,
			"author": person(f[2], f[3], f[4]), "committer": person(f[5], f[6], f[7]),
			"tree": map[string]any{"sha": f[0], "url": url}},
	}
}
