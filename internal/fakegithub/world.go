package fakegithub

import (
	"cmp"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Permission levels as the collaborators API names them.
const (
	PermAdmin    = "admin"
	PermMaintain = "maintain"
	PermWrite    = "write"
	PermTriage   = "triage"
	PermRead     = "read"
	PermNone     = "none"
)

// User is an account of the fake.
type User struct {
	Login string
	ID    int64
	Bot   bool
}

// Comment is an issue or pull request comment.
type Comment struct {
	ID        int64
	Issue     int
	User      string
	Body      string
	Reactions []string
	Created   time.Time
	Updated   time.Time
}

// Issue is an issue or the issue half of a pull request.
type Issue struct {
	Number int
	Title  string
	Body   string
	User   string
	State  string
	Labels []string
	PR     *Pull
}

// Pull is the pull request half of an issue.
type Pull struct {
	Head     string // branch name
	HeadSHA  string // when set, the head commit; else read from the branch
	HeadRepo string // owner/name; a fork when it differs from the base repository
	Base     string
	Draft    bool
	// MergeCommit, when set, is the commit the pull request was merged as: it is
	// merged, and listed among the pull requests of that commit.
	MergeCommit string
}

// CheckRun is a check run with its last state.
type CheckRun struct {
	ID         int64
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string
	Title      string
	Summary    string
	Text       string
	DetailsURL string
}

// Dispatch is one workflow_dispatch request.
type Dispatch struct {
	Repo     string
	Workflow string
	Ref      string
	Inputs   map[string]string
	At       time.Time
	RunID    int64 // the run the dispatch started (see Runs)
}

// Repo is a repository of the fake.
type Repo struct {
	Owner, Name   string
	ID            int64
	DefaultBranch string
	// GitDir is a bare git repository holding the branches; refs are read from it, so
	// a push by git shows in the API at once.
	GitDir        string
	Collaborators map[string]string // login -> permission

	issues    map[int]*Issue
	nextIssue int
}

// AddUser adds an account.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.ID == 0 {
		s.nextID++
		u.ID = s.nextID
	}
	s.users[strings.ToLower(u.Login)] = &u
}

// UserID is the id of an account, 0 for an unknown one.
func (s *Server) UserID(login string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.users[strings.ToLower(login)]; u != nil {
		return u.ID
	}
	return 0
}

// AddToken lets token act as login (a personal or GITHUB_TOKEN-like token).
func (s *Server) AddToken(token, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = login
}

// AddRepo adds a repository.
func (s *Server) AddRepo(r *Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	r.ID = s.nextID
	r.issues = map[int]*Issue{}
	if r.Collaborators == nil {
		r.Collaborators = map[string]string{}
	}
	s.repos[strings.ToLower(r.Owner+"/"+r.Name)] = r
}

// AddIssue adds an issue (or a pull request when i.PR is set) with the given number,
// or the next free one when i.Number is 0, and returns its number.
func (s *Server) AddIssue(repo string, i Issue) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(repo)]
	if r == nil {
		return 0, fmt.Errorf("fakegithub: no repository %s", repo)
	}
	if i.Number == 0 {
		i.Number = r.nextIssue + 1
	}
	r.nextIssue = max(r.nextIssue, i.Number)
	if i.State == "" {
		i.State = "open"
	}
	r.issues[i.Number] = &i
	return i.Number, nil
}

// AddComment adds a comment as if user had written it, and returns it.
func (s *Server) AddComment(repo string, issue int, user, body string) (Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(repo)]
	if r == nil || r.issues[issue] == nil {
		return Comment{}, fmt.Errorf("fakegithub: no issue %s#%d", repo, issue)
	}
	return *s.newComment(issue, user, body), nil
}

func (s *Server) newComment(issue int, user, body string) *Comment {
	now := time.Now().UTC().Truncate(time.Second)
	c := &Comment{ID: s.newID(), Issue: issue, User: user, Body: body, Created: now, Updated: now}
	s.comments[c.ID] = c
	return c
}

// newID is the next id of anything the fake creates; the caller holds s.mu.
func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}

// OnDispatch registers fn to run (in its own goroutine) after each workflow dispatch.
func (s *Server) OnDispatch(fn func(Dispatch)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onDispatch = fn
}

// Comments returns the comments of an issue, oldest first.
func (s *Server) Comments(issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.Issue == issue {
			out = append(out, c.copy())
		}
	}
	slices.SortFunc(out, func(a, b Comment) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func (c *Comment) copy() Comment {
	cc := *c
	cc.Reactions = slices.Clone(c.Reactions)
	return cc
}

// Comment returns one comment.
func (s *Server) Comment(id int64) (Comment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.comments[id]; ok {
		return c.copy(), true
	}
	return Comment{}, false
}

// Issues returns the issues and pull requests of a repository by number.
func (s *Server) Issues(repo string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(repo)]
	if r == nil {
		return nil
	}
	return sortedValues(r.issues)
}

// CheckRuns returns the check runs, oldest first.
func (s *Server) CheckRuns() []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedValues(s.checks)
}

// Runs returns the workflow runs, oldest first.
func (s *Server) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedValues(s.runs)
}

// sortedValues copies a map's values in the order of their keys (ids, numbers).
func sortedValues[K cmp.Ordered, V any](m map[K]*V) []V {
	out := make([]V, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, *m[k])
	}
	return out
}

// Dispatches returns the workflow dispatches, in order.
func (s *Server) Dispatches() []Dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.dispatch)
}

// Log returns one line per write the world served, in order ("POST /repos/o/r/...").
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// apiError is a GitHub-shaped error answer.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func fail(status int, format string, a ...any) error {
	return &apiError{status: status, msg: fmt.Sprintf(format, a...)}
}

var errNotFound = fail(http.StatusNotFound, "Not Found")

// access is who may call a route.
type access int

const (
	anyone   access = iota // an installation or user token, or the App's JWT
	appJWT                 // the App's JWT only
	tokenNow               // a token only: the App's JWT cannot act on a repository
)

// handler serves one route; the caller holds s.mu.
type handler func(s *Server, c *call) (int, any, error)

// call is one request being served.
type call struct {
	r       *http.Request
	repo    *Repo // for routes under /repos/{owner}/{repo}
	issue   *Issue
	comment *Comment
	check   *CheckRun
	run     *Run
	login   string // the authenticated account ("" for the App's JWT)
	app     bool
	body    map[string]any
	list    []any // a body that is a JSON array (as for adding labels)
}

func (c *call) arg(name string) string { return c.r.PathValue(name) }

// route adapts a handler to the mux: it authenticates, decodes the body, finds the
// repository, and answers through reply, which checks the answer's shape.
func (s *Server) route(who access, fn handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, v, err := s.serve(&call{r: r}, who, fn)
		s.reply(w, r.Method, r.URL.Path, answer(status, v, err), true)
	})
}

func (s *Server) serve(c *call, who access, fn handler) (int, any, error) {
	if err := s.authenticate(c, who); err != nil {
		return 0, nil, err
	}
	if c.r.Method == http.MethodPost || c.r.Method == http.MethodPatch || c.r.Method == http.MethodPut {
		var v any
		if err := json.NewDecoder(c.r.Body).Decode(&v); err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, fail(http.StatusBadRequest, "Problems parsing JSON: %v", err)
		}
		c.body, _ = v.(map[string]any)
		c.list, _ = v.([]any)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.r.Method != http.MethodGet {
		s.log = append(s.log, c.r.Method+" "+c.r.URL.Path)
	}
	if err := s.find(c); err != nil {
		return 0, nil, err
	}
	return fn(s, c)
}

// find looks up what the path names, by GitHub's names of the path parameters: a
// repository, and in it an issue, a pull request, a comment, a check run or a workflow
// run. Anything missing, or of another repository, is not found.
func (s *Server) find(c *call) error {
	if c.arg("owner") == "" {
		return nil
	}
	r := s.repos[strings.ToLower(c.arg("owner")+"/"+c.arg("repo"))]
	if c.repo = r; r == nil {
		return errNotFound
	}
	num := func(name string) int64 {
		n, err := strconv.ParseInt(c.arg(name), 10, 64)
		if err != nil || n <= 0 {
			return -1
		}
		return n
	}
	ok := true
	switch {
	case c.arg("issue_number") != "":
		c.issue = r.issues[int(num("issue_number"))]
		ok = c.issue != nil
	case c.arg("pull_number") != "":
		c.issue = r.issues[int(num("pull_number"))]
		ok = c.issue != nil && c.issue.PR != nil
	case c.arg("comment_id") != "":
		c.comment = s.comments[num("comment_id")]
		ok = c.comment != nil && r.issues[c.comment.Issue] != nil
	case c.arg("check_run_id") != "":
		c.check = s.checks[num("check_run_id")]
		ok = c.check != nil
	case c.arg("run_id") != "":
		c.run = s.runs[num("run_id")]
		ok = c.run != nil && strings.EqualFold(c.run.Repo, r.Owner+"/"+r.Name)
	}
	if !ok {
		return errNotFound
	}
	return nil
}

// answer turns a handler's result into the HTTP answer GitHub would give.
func answer(status int, v any, err error) Response {
	h := http.Header{"X-Github-Media-Type": {"github.v3; format=json"}}
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = &apiError{status: http.StatusInternalServerError, msg: err.Error()}
		}
		status, v = ae.status, map[string]any{"message": ae.msg, "documentation_url": "https://docs.github.com/rest"}
	}
	switch v := v.(type) {
	case nil:
		return Response{Status: status, Header: h}
	case rawSHA:
		h.Set("Content-Type", "application/vnd.github.sha; charset=utf-8")
		return Response{Status: status, Header: h, Body: []byte(v)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Response{Status: http.StatusInternalServerError, Header: h, Body: []byte(err.Error())}
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	return Response{Status: status, Header: h, Body: b}
}

// authenticate accepts an App JWT signed with the App's key, an installation token the
// fake minted, or a token added with AddToken, as the route allows.
func (s *Server) authenticate(c *call, who access) error {
	scheme, cred, _ := strings.Cut(c.r.Header.Get("Authorization"), " ")
	if cred == "" {
		return fail(http.StatusUnauthorized, "Requires authentication")
	}
	switch strings.ToLower(scheme) {
	case "bearer", "token":
	default:
		return fail(http.StatusUnauthorized, "Bad credentials")
	}
	if strings.Count(cred, ".") == 2 {
		if err := s.verifyJWT(cred); err != nil {
			return fail(http.StatusUnauthorized, "A JSON web token could not be decoded: %v", err)
		}
		if who == tokenNow {
			return fail(http.StatusForbidden, "an App JWT cannot call %s; use an installation token", c.r.URL.Path)
		}
		c.app = true
		return nil
	}
	if who == appJWT {
		return fail(http.StatusUnauthorized, "%s %s needs the App's JWT", c.r.Method, c.r.URL.Path)
	}
	s.mu.Lock()
	login, ok := s.tokens[cred]
	s.mu.Unlock()
	if !ok {
		return fail(http.StatusUnauthorized, "Bad credentials")
	}
	c.login = login
	return nil
}

func (s *Server) verifyJWT(tok string) error {
	parts := strings.Split(tok, ".")
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(s.appKey, crypto.SHA256, sum[:], sig); err != nil {
		return errors.New("signature does not verify with the App's key")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return err
	}
	var claims struct {
		Iss any   `json:"iss"`
		Exp int64 `json:"exp"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		return err
	}
	if fmt.Sprint(claims.Iss) != strconv.FormatInt(s.appID, 10) {
		return fmt.Errorf("issuer %v is not App %d", claims.Iss, s.appID)
	}
	if claims.Exp < time.Now().Unix() {
		return errors.New("expired")
	}
	return nil
}

func str(m map[string]any, k string) string { v, _ := m[k].(string); return v }

// branchHead reads a branch's commit from the repository's bare git directory.
func branchHead(r *Repo, branch string) (string, bool) {
	if r.GitDir == "" || strings.HasPrefix(branch, "-") {
		return "", false
	}
	out, err := exec.Command("git", "--git-dir", r.GitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}").Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

func randomToken() string {
	b := make([]byte, 20)
	rand.Read(b) //nolint:errcheck // crypto/rand does not fail on Linux
	return "ghs_" + hex.EncodeToString(b)
}
