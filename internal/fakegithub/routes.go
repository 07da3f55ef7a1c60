package fakegithub

import (
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"
)

// routes are the endpoints perfbot calls, as ServeMux patterns relative to the base
// path. Each answer carries the fields GitHub documents as required for it (reply
// checks them against GitHub's REST description in tests). A new endpoint is one line
// here and its handler.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range []struct {
		pattern string
		who     access
		fn      handler
	}{
		{"GET /app", appJWT, getApp},
		{"POST /app/installations/{installation_id}/access_tokens", appJWT, mintToken},
		{"GET /app/hook/deliveries", appJWT, listDeliveries},
		{"GET /user", tokenNow, getUser},
		{"GET /repos/{owner}/{repo}/installation", appJWT, getInstallation},
		{"GET /repos/{owner}/{repo}", anyone, getRepo},
		{"GET /repos/{owner}/{repo}/git/ref/heads/{branch...}", anyone, getRef},
		{"GET /repos/{owner}/{repo}/branches/{branch...}", anyone, getBranch},
		{"GET /repos/{owner}/{repo}/collaborators/{login}/permission", anyone, getPermission},
		{"POST /repos/{owner}/{repo}/issues", tokenNow, createIssue},
		{"GET /repos/{owner}/{repo}/issues/{issue_number}", anyone, getIssue},
		{"PATCH /repos/{owner}/{repo}/issues/{issue_number}", tokenNow, editIssue},
		{"GET /repos/{owner}/{repo}/issues/{a}/{b}", anyone, getIssuePart},
		{"POST /repos/{owner}/{repo}/issues/{issue_number}/comments", tokenNow, createComment},
		{"POST /repos/{owner}/{repo}/issues/{issue_number}/labels", tokenNow, addLabels},
		{"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", tokenNow, editComment},
		{"POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", tokenNow, react},
		{"GET /repos/{owner}/{repo}/pulls", anyone, listPulls},
		{"POST /repos/{owner}/{repo}/pulls", tokenNow, createPull},
		{"GET /repos/{owner}/{repo}/pulls/{pull_number}", anyone, getPull},
		{"PATCH /repos/{owner}/{repo}/pulls/{pull_number}", tokenNow, editPull},
		{"POST /repos/{owner}/{repo}/check-runs", tokenNow, createCheck},
		{"GET /repos/{owner}/{repo}/check-runs/{check_run_id}", anyone, getCheck},
		{"PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", tokenNow, editCheck},
		{"GET /repos/{owner}/{repo}/commits/{ref}/check-runs", anyone, listChecksForRef},
		{"GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls", anyone, listCommitPulls},
		{"GET /repos/{owner}/{repo}/commits/{ref...}", anyone, getCommit},
		{"GET /repos/{owner}/{repo}/compare/{basehead...}", anyone, compare},
		{"GET /repos/{owner}/{repo}/contents/{path...}", anyone, getContents},
		{"POST /repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches", tokenNow, dispatch},
		{"GET /repos/{owner}/{repo}/actions/workflows/{workflow}/runs", anyone, listWorkflowRuns},
		{"GET /repos/{owner}/{repo}/actions/runs/{run_id}", anyone, getRun},
		{"POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel", tokenNow, cancelRun},
		{"GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", anyone, listRunArtifacts},
	} {
		mux.Handle(rt.pattern, s.route(rt.who, rt.fn))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.reply(w, r.Method, r.URL.Path, answer(0, nil, fail(http.StatusNotFound, "Not Found: the fake GitHub does not serve %s %s", r.Method, r.URL.Path)), false)
	})
	return mux
}

// getIssuePart serves GET issues/{issue_number}/comments and GET issues/comments/{comment_id}: as
// ServeMux patterns the two conflict (issues/comments/comments matches both, and
// neither is more specific), so one pattern takes both.
func getIssuePart(s *Server, c *call) (int, any, error) {
	next := listComments
	switch a, b := c.arg("a"), c.arg("b"); {
	case a == "comments":
		c.r.SetPathValue("comment_id", b)
		next = getComment
	case b == "comments":
		c.r.SetPathValue("issue_number", a)
	default:
		return 0, nil, errNotFound
	}
	if err := s.find(c); err != nil {
		return 0, nil, err
	}
	return next(s, c)
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// api is the API's URL without the trailing slash, as GitHub writes it in "url" fields.
func (s *Server) api() string { return strings.TrimSuffix(s.URL(), "/") }

func (s *Server) userJSON(login string) map[string]any {
	u := s.users[strings.ToLower(login)]
	if u == nil {
		s.nextID++
		u = &User{Login: login, ID: s.nextID}
		s.users[strings.ToLower(login)] = u
	}
	typ := "User"
	if u.Bot {
		typ = "Bot"
	}
	base := s.api()
	return map[string]any{
		"login": u.Login, "id": u.ID, "node_id": fmt.Sprintf("U_%d", u.ID), "type": typ, "site_admin": false,
		"avatar_url": "", "gravatar_id": "", "url": base + "/users/" + u.Login, "html_url": "http://github.invalid/" + u.Login,
		"followers_url": "", "following_url": "", "gists_url": "", "starred_url": "", "subscriptions_url": "",
		"organizations_url": "", "repos_url": "", "events_url": "", "received_events_url": "",
	}
}

func getApp(s *Server, c *call) (int, any, error) {
	now := ts(time.Unix(1700000000, 0))
	return 200, map[string]any{
		"id": s.appID, "slug": s.appSlug, "node_id": "A_1", "name": s.appSlug, "description": "perfbot demo App",
		"owner": s.userJSON(s.appSlug + "[bot]"), "external_url": "http://github.invalid", "html_url": "http://github.invalid/apps/" + s.appSlug,
		"created_at": now, "updated_at": now, "permissions": map[string]any{"issues": "write", "pull_requests": "write", "checks": "write", "actions": "write", "contents": "write"},
		"events": []string{"issue_comment", "workflow_run", "check_run"},
	}, nil
}

func mintToken(s *Server, c *call) (int, any, error) {
	tok := randomToken()
	s.tokens[tok] = s.appSlug + "[bot]"
	return 201, map[string]any{
		"token": tok, "expires_at": ts(time.Now().Add(time.Hour)),
		"permissions":          map[string]any{"issues": "write", "pull_requests": "write", "checks": "write", "actions": "write", "contents": "write"},
		"repository_selection": "all",
	}, nil
}

func listDeliveries(s *Server, c *call) (int, any, error) {
	return 200, []any{}, nil
}

// InstallationID is the id of the App's one installation, on every repository.
const InstallationID = 7

func getInstallation(s *Server, c *call) (int, any, error) {
	r := c.repo
	now := ts(time.Unix(1700000000, 0))
	base := s.api()
	return 200, map[string]any{
		"id": InstallationID, "app_id": s.appID, "app_slug": s.appSlug, "target_id": 1, "target_type": "Organization",
		"account": s.userJSON(r.Owner), "repository_selection": "all", "single_file_name": nil,
		"access_tokens_url": fmt.Sprintf("%s/app/installations/%d/access_tokens", base, InstallationID),
		"repositories_url":  base + "/installation/repositories", "html_url": "http://github.invalid/settings/installations/7",
		"events": []string{"issue_comment", "workflow_run", "check_run"}, "created_at": now, "updated_at": now,
		"permissions":  map[string]any{"issues": "write", "pull_requests": "write", "checks": "write", "actions": "write", "contents": "write"},
		"suspended_at": nil, "suspended_by": nil,
	}, nil
}

func getUser(s *Server, c *call) (int, any, error) {
	return 200, s.userJSON(c.login), nil
}

func (s *Server) repoJSON(r *Repo) map[string]any {
	full := r.Owner + "/" + r.Name
	base := s.api() + "/repos/" + full
	m := map[string]any{
		"id": r.ID, "node_id": fmt.Sprintf("R_%d", r.ID), "name": r.Name, "full_name": full, "private": false,
		"owner": s.userJSON(r.Owner), "html_url": "http://github.invalid/" + full, "description": nil, "fork": false,
		"url": base, "default_branch": r.DefaultBranch, "clone_url": "file://" + r.GitDir,
		"visibility": "public", "archived": false, "disabled": false,
		"created_at": ts(time.Unix(1700000000, 0)), "updated_at": ts(time.Unix(1700000000, 0)), "pushed_at": ts(time.Unix(1700000000, 0)),
	}
	fill(m, "", repoURLKeys)
	fill(m, 0, repoCountKeys)
	fill(m, true, repoFlagKeys)
	fill(m, nil, repoNullKeys)
	return m
}

// Keys GitHub documents as always present that the demo has no use for.
var (
	repoURLKeys = strings.Fields(`archive_url assignees_url blobs_url branches_url collaborators_url comments_url
		commits_url compare_url contents_url contributors_url deployments_url downloads_url events_url forks_url
		git_commits_url git_refs_url git_tags_url git_url hooks_url issue_comment_url issue_events_url issues_url
		keys_url labels_url languages_url merges_url milestones_url notifications_url pulls_url releases_url
		ssh_url stargazers_url statuses_url subscribers_url subscription_url svn_url tags_url teams_url trees_url`)
	repoCountKeys = strings.Fields(`forks forks_count network_count open_issues open_issues_count size
		stargazers_count subscribers_count watchers watchers_count`)
	repoFlagKeys  = strings.Fields(`has_downloads has_issues has_pages has_projects has_wiki`)
	repoNullKeys  = strings.Fields(`homepage language license mirror_url`)
	pullCountKeys = strings.Fields(`additions changed_files comments commits deletions review_comments`)
	pullNullKeys  = strings.Fields(`mergeable merged_by`)
)

func fill(m map[string]any, v any, keys []string) {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
}

func getRepo(s *Server, c *call) (int, any, error) {
	r := c.repo
	return 200, s.repoJSON(r), nil
}

func getRef(s *Server, c *call) (int, any, error) {
	r := c.repo
	sha, ok := branchHead(r, c.arg("branch"))
	if !ok {
		return 0, nil, errNotFound
	}
	url := s.api() + "/repos/" + r.Owner + "/" + r.Name + "/git/refs/heads/" + c.arg("branch")
	return 200, map[string]any{"ref": "refs/heads/" + c.arg("branch"), "node_id": "REF_1", "url": url,
		"object": map[string]any{"type": "commit", "sha": sha, "url": url}}, nil
}

func getBranch(s *Server, c *call) (int, any, error) {
	r := c.repo
	sha, ok := branchHead(r, c.arg("branch"))
	if !ok {
		return 0, nil, fail(http.StatusNotFound, "Branch not found")
	}
	return 200, map[string]any{"name": c.arg("branch"), "protected": false, "commit": s.commitJSON(r, sha),
		"_links": map[string]any{"html": "", "self": ""}, "protection_url": "", "protection": map[string]any{}}, nil
}

func getPermission(s *Server, c *call) (int, any, error) {
	r := c.repo
	login := c.arg("login")
	perm, ok := r.Collaborators[strings.ToLower(login)]
	if !ok {
		if s.users[strings.ToLower(login)] == nil {
			return 0, nil, errNotFound
		}
		perm = PermRead // public repository: everyone reads
	}
	// The API names maintain as write and triage as read in "permission"; role_name
	// keeps the exact role.
	legacy := map[string]string{PermMaintain: PermWrite, PermTriage: PermRead}[perm]
	if legacy == "" {
		legacy = perm
	}
	u := s.userJSON(login)
	u["permissions"] = map[string]any{"admin": perm == PermAdmin, "maintain": perm == PermAdmin || perm == PermMaintain,
		"push": legacy == PermWrite || perm == PermAdmin, "triage": perm != PermRead && perm != PermNone, "pull": perm != PermNone}
	u["role_name"] = perm
	return 200, map[string]any{"permission": legacy, "role_name": perm, "user": u}, nil
}

func (s *Server) issueJSON(r *Repo, i *Issue) map[string]any {
	base := s.api() + "/repos/" + r.Owner + "/" + r.Name
	labels := []any{}
	for k, l := range i.Labels {
		labels = append(labels, map[string]any{"id": k + 1, "node_id": "L", "url": "", "name": l, "color": "ededed", "default": false, "description": nil})
	}
	now := ts(time.Unix(1700000000, 0))
	m := map[string]any{
		"id": int64(i.Number) + r.ID*100000, "node_id": fmt.Sprintf("I_%d", i.Number), "number": i.Number, "title": i.Title, "body": i.Body,
		"state": i.State, "user": s.userJSON(i.User), "labels": labels, "assignee": nil, "milestone": nil, "locked": false,
		"comments": 0, "created_at": now, "updated_at": now, "closed_at": nil, "author_association": "MEMBER",
		"url": fmt.Sprintf("%s/issues/%d", base, i.Number), "repository_url": base, "labels_url": "", "comments_url": "", "events_url": "",
		"html_url": fmt.Sprintf("http://github.invalid/%s/%s/issues/%d", r.Owner, r.Name, i.Number),
	}
	if i.PR != nil {
		m["pull_request"] = map[string]any{"url": fmt.Sprintf("%s/pulls/%d", base, i.Number), "html_url": "", "diff_url": "", "patch_url": ""}
	}
	return m
}

func getIssue(s *Server, c *call) (int, any, error) {
	return http.StatusOK, s.issueJSON(c.repo, c.issue), nil
}

func createIssue(s *Server, c *call) (int, any, error) {
	r := c.repo
	title := str(c.body, "title")
	if strings.TrimSpace(title) == "" {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: title is missing")
	}
	r.nextIssue++
	i := &Issue{Number: r.nextIssue, Title: title, Body: str(c.body, "body"), User: c.login, State: "open", Labels: stringList(c.body["labels"])}
	r.issues[i.Number] = i
	return 201, s.issueJSON(r, i), nil
}

func editIssue(s *Server, c *call) (int, any, error) {
	r, i := c.repo, c.issue
	setStrings(c.body, map[string]*string{"title": &i.Title, "body": &i.Body, "state": &i.State})
	return 200, s.issueJSON(r, i), nil
}

func stringList(v any) []string {
	var out []string
	for _, e := range asList(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// setStrings copies the string fields of a request body that are present.
func setStrings(body map[string]any, fields map[string]*string) {
	for k, p := range fields {
		if v, ok := body[k].(string); ok {
			*p = v
		}
	}
}

func (s *Server) commentJSON(r *Repo, cm *Comment) map[string]any {
	base := s.api() + "/repos/" + r.Owner + "/" + r.Name
	return map[string]any{
		"id": cm.ID, "node_id": fmt.Sprintf("IC_%d", cm.ID), "body": cm.Body, "user": s.userJSON(cm.User),
		"created_at": ts(cm.Created), "updated_at": ts(cm.Updated), "author_association": "MEMBER",
		"url":       fmt.Sprintf("%s/issues/comments/%d", base, cm.ID),
		"html_url":  fmt.Sprintf("http://github.invalid/%s/%s/issues/%d#issuecomment-%d", r.Owner, r.Name, cm.Issue, cm.ID),
		"issue_url": fmt.Sprintf("%s/issues/%d", base, cm.Issue),
	}
}

func listComments(s *Server, c *call) (int, any, error) {
	r, i := c.repo, c.issue
	out := []any{}
	var ids []int64
	for id, cm := range s.comments {
		if cm.Issue == i.Number {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	for _, id := range ids {
		out = append(out, s.commentJSON(r, s.comments[id]))
	}
	return 200, out, nil
}

func createComment(s *Server, c *call) (int, any, error) {
	r, i := c.repo, c.issue
	body := str(c.body, "body")
	if body == "" {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: body is missing")
	}
	if len([]rune(body)) > 65536 {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: body is too long (maximum is 65536 characters)")
	}
	return 201, s.commentJSON(r, s.newComment(i.Number, c.login, body)), nil
}

func addLabels(s *Server, c *call) (int, any, error) {
	r, i := c.repo, c.issue
	labels := stringList(c.list)
	if c.list == nil {
		labels = stringList(c.body["labels"])
	}
	for _, l := range labels {
		if !slices.Contains(i.Labels, l) {
			i.Labels = append(i.Labels, l)
		}
	}
	return 200, s.issueJSON(r, i)["labels"], nil
}

func getComment(s *Server, c *call) (int, any, error) {
	return http.StatusOK, s.commentJSON(c.repo, c.comment), nil
}

func editComment(s *Server, c *call) (int, any, error) {
	r, cm := c.repo, c.comment
	if !strings.EqualFold(cm.User, c.login) {
		return 0, nil, fail(http.StatusForbidden, "Resource not accessible by integration: %s cannot edit a comment of %s", c.login, cm.User)
	}
	cm.Body = str(c.body, "body")
	cm.Updated = time.Now().UTC().Truncate(time.Second)
	return 200, s.commentJSON(r, cm), nil
}

var reactions = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true, "hooray": true, "rocket": true, "eyes": true}

func react(s *Server, c *call) (int, any, error) {
	cm := c.comment
	content := str(c.body, "content")
	if !reactions[content] {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: content %q is not a reaction", content)
	}
	status := 201
	if slices.Contains(cm.Reactions, content) {
		status = 200 // GitHub answers 200 for a reaction the user already left
	} else {
		cm.Reactions = append(cm.Reactions, content)
	}
	s.nextID++
	return status, map[string]any{"id": s.nextID, "node_id": "RE", "user": s.userJSON(c.login), "content": content, "created_at": ts(time.Now())}, nil
}

func (s *Server) pullJSON(r *Repo, i *Issue) map[string]any {
	m := s.issueJSON(r, i)
	base := s.api() + "/repos/" + r.Owner + "/" + r.Name
	sha := i.PR.HeadSHA
	if sha == "" {
		sha, _ = branchHead(r, i.PR.Head)
	}
	baseSHA, _ := branchHead(r, i.PR.Base)
	headRepo := r
	if i.PR.HeadRepo != "" && !strings.EqualFold(i.PR.HeadRepo, r.Owner+"/"+r.Name) {
		owner, name, _ := strings.Cut(i.PR.HeadRepo, "/")
		headRepo = &Repo{Owner: owner, Name: name, ID: r.ID + 1, DefaultBranch: "main"}
	}
	hr := s.repoJSON(headRepo)
	hr["fork"] = headRepo != r
	m["url"] = fmt.Sprintf("%s/pulls/%d", base, i.Number)
	m["html_url"] = fmt.Sprintf("http://github.invalid/%s/%s/pull/%d", r.Owner, r.Name, i.Number)
	m["head"] = map[string]any{"label": headRepo.Owner + ":" + i.PR.Head, "ref": i.PR.Head, "sha": sha, "user": s.userJSON(headRepo.Owner), "repo": hr}
	m["base"] = map[string]any{"label": r.Owner + ":" + i.PR.Base, "ref": i.PR.Base, "sha": baseSHA, "user": s.userJSON(r.Owner), "repo": s.repoJSON(r)}
	m["draft"] = i.PR.Draft
	m["merged"] = false
	m["merged_at"] = nil
	m["merge_commit_sha"] = nil
	if i.PR.MergeCommit != "" {
		m["merged"] = true
		m["merged_at"] = m["updated_at"]
		m["merge_commit_sha"] = i.PR.MergeCommit
	}
	links := map[string]any{}
	for _, k := range []string{"comments", "commits", "statuses", "html", "issue", "review_comments", "review_comment", "self"} {
		links[k] = map[string]any{"href": m["url"]}
	}
	m["_links"] = links
	fill(m, 0, pullCountKeys)
	fill(m, nil, pullNullKeys)
	m["maintainer_can_modify"] = false
	m["mergeable_state"] = "clean"
	for _, k := range []string{"diff_url", "patch_url", "issue_url", "commits_url", "review_comments_url", "review_comment_url", "comments_url", "statuses_url"} {
		m[k] = ""
	}
	m["assignees"] = []any{}
	m["requested_reviewers"] = []any{}
	m["requested_teams"] = []any{}
	m["active_lock_reason"] = nil
	m["auto_merge"] = nil
	delete(m, "pull_request")
	delete(m, "repository_url")
	delete(m, "labels_url")
	delete(m, "events_url")
	return m
}

func listPulls(s *Server, c *call) (int, any, error) {
	r := c.repo
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	out := []any{}
	for _, n := range sortedNumbers(r) {
		i := r.issues[n]
		if i.PR == nil || (state != "all" && i.State != state) {
			continue
		}
		if h := q.Get("head"); h != "" {
			owner := r.Owner
			if i.PR.HeadRepo != "" {
				owner, _, _ = strings.Cut(i.PR.HeadRepo, "/")
			}
			if !strings.EqualFold(h, owner+":"+i.PR.Head) {
				continue
			}
		}
		if b := q.Get("base"); b != "" && b != i.PR.Base {
			continue
		}
		out = append(out, s.pullJSON(r, i))
	}
	return 200, out, nil
}

// listCommitPulls serves GET commits/{commit_sha}/pulls: the pull requests GitHub
// associates with the commit, here those whose merge commit it is (Pull.MergeCommit)
// and those whose head holds it while their base branch does not, by number.
func listCommitPulls(s *Server, c *call) (int, any, error) {
	r := c.repo
	sha, ok := resolve(r, c.arg("commit_sha"))
	if !ok {
		return 0, nil, fail(http.StatusUnprocessableEntity, "No commit found for SHA: %s", c.arg("commit_sha"))
	}
	out := []any{}
	for _, n := range sortedNumbers(r) {
		i := r.issues[n]
		if i.PR != nil && (i.PR.MergeCommit == sha || pullHolds(r, i.PR, sha)) {
			out = append(out, s.pullJSON(r, i))
		}
	}
	return 200, out, nil
}

// pullHolds says the pull request's head holds commit sha and its base branch does not.
func pullHolds(r *Repo, p *Pull, sha string) bool {
	head := p.HeadSHA
	if head == "" {
		head, _ = branchHead(r, p.Head)
	}
	if head == "" || r.GitDir == "" {
		return false
	}
	ancestor := func(of string) bool {
		return exec.Command("git", "--git-dir", r.GitDir, "merge-base", "--is-ancestor", sha, of).Run() == nil
	}
	if !ancestor(head) {
		return false
	}
	base, ok := branchHead(r, p.Base)
	return !ok || !ancestor(base)
}

func sortedNumbers(r *Repo) []int {
	var ns []int
	for n := range r.issues {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return ns
}

func getPull(s *Server, c *call) (int, any, error) {
	return http.StatusOK, s.pullJSON(c.repo, c.issue), nil
}

func createPull(s *Server, c *call) (int, any, error) {
	r := c.repo
	head, base := str(c.body, "head"), str(c.body, "base")
	if _, branch, ok := strings.Cut(head, ":"); ok {
		head = branch
	}
	if _, ok := branchHead(r, head); !ok {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: head %q does not exist", head)
	}
	if _, ok := branchHead(r, base); !ok {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: base %q does not exist", base)
	}
	for _, i := range r.issues {
		if i.PR != nil && i.State == "open" && i.PR.Head == head && i.PR.Base == base {
			return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: A pull request already exists for %s:%s.", r.Owner, head)
		}
	}
	draft, _ := c.body["draft"].(bool)
	r.nextIssue++
	i := &Issue{Number: r.nextIssue, Title: str(c.body, "title"), Body: str(c.body, "body"), User: c.login, State: "open",
		PR: &Pull{Head: head, Base: base, Draft: draft}}
	r.issues[i.Number] = i
	return 201, s.pullJSON(r, i), nil
}

func editPull(s *Server, c *call) (int, any, error) {
	r, i := c.repo, c.issue
	setStrings(c.body, map[string]*string{"title": &i.Title, "body": &i.Body, "state": &i.State, "base": &i.PR.Base})
	return 200, s.pullJSON(r, i), nil
}

func (s *Server) checkJSON(r *Repo, cr *CheckRun) map[string]any {
	var conclusion any
	if cr.Conclusion != "" {
		conclusion = cr.Conclusion
	}
	url := fmt.Sprintf("%s/repos/%s/%s/check-runs/%d", s.api(), r.Owner, r.Name, cr.ID)
	return map[string]any{
		"id": cr.ID, "node_id": fmt.Sprintf("CR_%d", cr.ID), "name": cr.Name, "head_sha": cr.HeadSHA, "status": cr.Status,
		"conclusion": conclusion, "external_id": "", "url": url, "html_url": url, "details_url": cr.DetailsURL,
		"started_at": ts(time.Unix(1700000000, 0)), "completed_at": nil,
		"output":      map[string]any{"title": cr.Title, "summary": cr.Summary, "text": cr.Text, "annotations_count": 0, "annotations_url": url + "/annotations"},
		"check_suite": map[string]any{"id": 1}, "app": nil, "pull_requests": []any{},
	}
}

func (s *Server) applyCheck(cr *CheckRun, body map[string]any) error {
	if v, ok := body["name"].(string); ok {
		cr.Name = v
	}
	if v, ok := body["status"].(string); ok {
		cr.Status = v
	}
	if v, ok := body["conclusion"].(string); ok {
		cr.Conclusion = v
		cr.Status = "completed"
	}
	if v, ok := body["details_url"].(string); ok {
		cr.DetailsURL = v
	}
	if out, ok := body["output"].(map[string]any); ok {
		cr.Title, cr.Summary, cr.Text = str(out, "title"), str(out, "summary"), str(out, "text")
		if len(cr.Summary) > 65535 || len(cr.Text) > 65535 {
			return fail(http.StatusUnprocessableEntity, "Validation Failed: output.summary and output.text are limited to 65535 characters")
		}
	}
	if cr.Status == "completed" && cr.Conclusion == "" {
		return fail(http.StatusUnprocessableEntity, "Validation Failed: a completed check run needs a conclusion")
	}
	return nil
}

func createCheck(s *Server, c *call) (int, any, error) {
	r := c.repo
	s.nextID++
	cr := &CheckRun{ID: s.nextID, HeadSHA: str(c.body, "head_sha"), Status: "queued"}
	if len(cr.HeadSHA) != 40 {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: head_sha must be a full commit SHA")
	}
	if err := s.applyCheck(cr, c.body); err != nil {
		return 0, nil, err
	}
	s.checks[cr.ID] = cr
	return 201, s.checkJSON(r, cr), nil
}

func editCheck(s *Server, c *call) (int, any, error) {
	if err := s.applyCheck(c.check, c.body); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.checkJSON(c.repo, c.check), nil
}

func dispatch(s *Server, c *call) (int, any, error) {
	r := c.repo
	ref := str(c.body, "ref")
	sha, ok := branchHead(r, strings.TrimPrefix(ref, "refs/heads/"))
	if !ok {
		return 0, nil, fail(http.StatusUnprocessableEntity, "No ref found for: %s", ref)
	}
	wf, err := readWorkflow(r, sha, c.arg("workflow"))
	if err != nil {
		return 0, nil, err
	}
	raw := map[string]string{}
	if in, ok := c.body["inputs"].(map[string]any); ok {
		for k, v := range in {
			sv, ok := v.(string)
			if !ok {
				return 0, nil, fail(http.StatusUnprocessableEntity, "Invalid value for input %q: inputs are strings", k)
			}
			raw[k] = sv
		}
	}
	inputs, err := wf.checkInputs(raw)
	if err != nil {
		return 0, nil, err
	}
	d := Dispatch{Repo: r.Owner + "/" + r.Name, Workflow: c.arg("workflow"), Ref: ref, Inputs: inputs, At: time.Now()}
	s.newRun(r, &d, wf.runName(c.arg("workflow"), inputs))
	s.dispatch = append(s.dispatch, d)
	if fn := s.onDispatch; fn != nil {
		go fn(d)
	}
	return http.StatusNoContent, nil, nil
}
