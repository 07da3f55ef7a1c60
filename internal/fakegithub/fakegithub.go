// Package fakegithub is a small, stateful GitHub on 127.0.0.1 for `perfbot demo`: one
// App, repositories whose branches live in real bare git repositories, issues, pull
// requests, comments, reactions, check runs, collaborator permissions and workflow
// dispatches. It answers the REST calls perfbot makes, in the shapes GitHub documents
// (its tests check the answers against GitHub's REST description), and keeps everything
// it was asked to do so the demo can show it.
//
// It is not a test double with expectations (that is internal/ghstub) and not a general
// GitHub emulator: an endpoint perfbot does not call answers 404 with a message naming
// it. It must never be exposed beyond the loopback interface.
package fakegithub

import (
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
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// Server is the fake GitHub. Create it with New, add repositories and users, then Start.
type Server struct {
	mu         sync.Mutex
	users      map[string]*User
	repos      map[string]*Repo
	comments   map[int64]*Comment
	checks     map[int64]*CheckRun
	tokens     map[string]string // token -> login
	appID      int64
	appSlug    string
	appKey     *rsa.PublicKey
	nextID     int64
	dispatch   []Dispatch
	runs       map[int64]*Run
	runNames   map[string]func(map[string]string) string
	log        []string
	onDispatch func(Dispatch)

	srv *http.Server
	url string
}

// New returns a fake with one GitHub App whose JWTs must verify with appKey.
func New(appID int64, appSlug string, appKey *rsa.PublicKey) *Server {
	s := &Server{
		users: map[string]*User{}, repos: map[string]*Repo{}, comments: map[int64]*Comment{},
		checks: map[int64]*CheckRun{}, tokens: map[string]string{},
		appID: appID, appSlug: appSlug, appKey: appKey, nextID: 1000,
	}
	s.AddUser(User{Login: appSlug + "[bot]", Bot: true})
	return s
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
	if i.Number > r.nextIssue {
		r.nextIssue = i.Number
	}
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
	s.nextID++
	now := time.Now().UTC().Truncate(time.Second)
	c := &Comment{ID: s.nextID, Issue: issue, User: user, Body: body, Created: now, Updated: now}
	s.comments[c.ID] = c
	return c
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
			cc := *c
			cc.Reactions = append([]string(nil), c.Reactions...)
			out = append(out, cc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Comment returns one comment.
func (s *Server) Comment(id int64) (Comment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comments[id]
	if !ok {
		return Comment{}, false
	}
	cc := *c
	cc.Reactions = append([]string(nil), c.Reactions...)
	return cc, true
}

// Issues returns the issues and pull requests of a repository by number.
func (s *Server) Issues(repo string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(repo)]
	if r == nil {
		return nil
	}
	var out []Issue
	for _, i := range r.issues {
		out = append(out, *i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Number < out[b].Number })
	return out
}

// CheckRuns returns the check runs, oldest first.
func (s *Server) CheckRuns() []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, c := range s.checks {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Dispatches returns the workflow dispatches, in order.
func (s *Server) Dispatches() []Dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Dispatch(nil), s.dispatch...)
}

// Log returns one line per write the fake served, in order ("POST /repos/o/r/...").
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// Start listens on 127.0.0.1 (a free port) and serves until Close.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	s.url = "http://" + ln.Addr().String() + "/"
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	return nil
}

// URL is the API's base URL, with a trailing slash.
func (s *Server) URL() string { return s.url }

// Close stops serving.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
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

type route struct {
	method string
	re     *regexp.Regexp
	fn     func(s *Server, c *call) (int, any, error)
}

// call is one request being served.
type call struct {
	r     *http.Request
	args  []string
	login string // the authenticated account ("" for the App's JWT)
	app   bool
	body  map[string]any
	list  []any // a body that is a JSON array (as for adding labels)
}

var routes []route

func handle(method, pattern string, fn func(s *Server, c *call) (int, any, error)) {
	routes = append(routes, route{method, regexp.MustCompile("^" + pattern + "$"), fn})
}

const seg = `([^/]+)`

// ServeHTTP answers one API call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := "/" + strings.TrimPrefix(r.URL.EscapedPath(), "/")
	path = strings.TrimPrefix(path, "/api/v3")
	for _, rt := range routes {
		if rt.method != r.Method {
			continue
		}
		m := rt.re.FindStringSubmatch(path)
		if m == nil {
			continue
		}
		c := &call{r: r, args: m[1:]}
		status, v, err := s.serve(c, rt)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				ae = &apiError{status: http.StatusInternalServerError, msg: err.Error()}
			}
			writeJSON(w, ae.status, map[string]any{"message": ae.msg, "documentation_url": "https://docs.github.com/rest"})
			return
		}
		if v == nil {
			w.WriteHeader(status)
			return
		}
		if sha, ok := v.(rawSHA); ok {
			w.Header().Set("Content-Type", "application/vnd.github.sha; charset=utf-8")
			w.WriteHeader(status)
			io.WriteString(w, string(sha)) //nolint:errcheck // the client went away
			return
		}
		writeJSON(w, status, v)
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"message": fmt.Sprintf("Not Found: the demo's GitHub does not serve %s %s", r.Method, path), "documentation_url": "https://docs.github.com/rest"})
}

func (s *Server) serve(c *call, rt route) (int, any, error) {
	if err := s.authenticate(c); err != nil {
		return 0, nil, err
	}
	if c.r.Body != nil && (c.r.Method == http.MethodPost || c.r.Method == http.MethodPatch || c.r.Method == http.MethodPut) {
		var v any
		dec := json.NewDecoder(http.MaxBytesReader(nil, c.r.Body, 1<<20))
		if err := dec.Decode(&v); err != nil && !errors.Is(err, io.EOF) {
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
	return rt.fn(s, c)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // the client went away
}

// authenticate accepts an App JWT signed with the App's key (for /app routes), an
// installation token the fake minted, or a token added with AddToken.
func (s *Server) authenticate(c *call) error {
	h := c.r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
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
		c.app = true
		return nil
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

func (s *Server) repo(c *call) (*Repo, error) {
	r := s.repos[strings.ToLower(c.args[0]+"/"+c.args[1])]
	if r == nil {
		return nil, fail(http.StatusNotFound, "Not Found")
	}
	return r, nil
}

func (s *Server) needToken(c *call) error {
	if c.app {
		return fail(http.StatusForbidden, "an App JWT cannot call %s; use an installation token", c.r.URL.Path)
	}
	return nil
}

func str(m map[string]any, k string) string { v, _ := m[k].(string); return v }

func intArg(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fail(http.StatusNotFound, "Not Found")
	}
	return n, nil
}

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
