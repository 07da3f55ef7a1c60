package fakegithub_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

// fakeT collects what the stub reports, so a test can assert that the stub fails a test.
type fakeT struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...); runtime.Goexit() }
func (f *fakeT) Fatal(args ...any)                 { f.Errorf("%s", fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeT) Cleanup(fn func())                 { f.cleanups = append(f.cleanups, fn) }

// finish runs the cleanups as the end of a test would and returns the reported errors.
func (f *fakeT) finish() []string {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

// inFake runs fn against a fake T in its own goroutine (Fatalf ends that goroutine),
// then returns what the stub reported.
func inFake(t *testing.T, fn func(ft *fakeT)) []string {
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ft)
	}()
	<-done
	return ft.finish()
}

func example(t testing.TB, name string) string {
	return testfix.Path(t, "github", "rest-openapi-examples", name+".json")
}

func do(t testing.TB, method, url, body string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func joined(errs []string) string { return strings.Join(errs, "\n") }

// wantReported runs fn against a fake T, fails unless the fake reported want, and
// returns the reports.
func wantReported(t *testing.T, want string, fn func(ft *fakeT)) []string {
	t.Helper()
	errs := inFake(t, fn)
	if !strings.Contains(joined(errs), want) {
		t.Errorf("reported %q, want it to mention %q", errs, want)
	}
	return errs
}

// The examples the stubs serve in perfbot's tests are GitHub's documented answers of
// the operations they stand for.
func TestExamplesAreDocumented(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, path string
		status       int
		file         string
	}{
		{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", 200, "issue-comment-items"},
		{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", 201, "issue-comment"},
		{"GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", 200, "issue-comment"},
		{"PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", 200, "issue-comment"},
		{"GET", "/repos/{owner}/{repo}/pulls", 200, "pull-request-simple-items"},
		{"POST", "/repos/{owner}/{repo}/pulls", 201, "pull-request"},
		{"PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}", 200, "pull-request"},
		{"PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", 200, "check-run"},
		{"POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", 201, "reaction"},
		{"POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", 200, "reaction"},
		{"GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", 200, "repository-collaborator-permission"},
		{"GET", "/repos/{owner}/{repo}/git/ref/{ref}", 200, "git-ref"},
		{"POST", "/app/installations/{installation_id}/access_tokens", 201, "installation-token"},
		{"GET", "/app", 200, "integration"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			t.Parallel()
			fakegithub.CheckDocumented(t, c.method, c.path, c.status, example(t, c.file))
		})
	}
}

func TestCheckDocumentedRejectsWrongExample(t *testing.T) {
	t.Parallel()
	wantReported(t, "is not an example documented for git/get-ref", func(ft *fakeT) {
		fakegithub.CheckDocumented(ft, "GET", "/repos/{owner}/{repo}/git/ref/{ref}", 200, example(t, "issue-comment"))
	})
}

func TestServesExpectedCallsInOrderAndRecordsThem(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	s.Expect("GET", "/repos/o/r/issues/comments/1", fakegithub.Status(502)).Times(2)
	s.Expect("GET", "/repos/o/r/issues/comments/1", fakegithub.JSONFile(200, example(t, "issue-comment")))

	for i, want := range []int{502, 502, 200} {
		code, _, _ := do(t, "GET", s.AbsURL("/repos/o/r/issues/comments/1"), "")
		if code != want {
			t.Errorf("call %d: status %d, want %d", i, code, want)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[2].Method != "GET" || reqs[2].Path != "/repos/o/r/issues/comments/1" {
		t.Errorf("recorded %v", reqs)
	}
}

func TestUnexpectedCallFailsTheTest(t *testing.T) {
	t.Parallel()
	var code int
	wantReported(t, "unexpected call DELETE /repos/o/r", func(ft *fakeT) {
		s := fakegithub.New(ft)
		code, _, _ = do(t, "DELETE", s.AbsURL("/repos/o/r"), "")
	})
	if code != http.StatusNotImplemented {
		t.Errorf("status %d, want 501", code)
	}
}

func TestUnusedExpectationFailsAtCleanup(t *testing.T) {
	t.Parallel()
	wantReported(t, "GET /repos/o/r: called 1 of 2 time(s)", func(ft *fakeT) {
		s := fakegithub.New(ft)
		s.Expect("GET", "/repos/o/r", fakegithub.JSONFile(200, example(t, "full-repository"))).Times(2)
		do(t, "GET", s.AbsURL("/repos/o/r"), "")
	})
}

func TestCallOutsideTheBasePathFails(t *testing.T) {
	t.Parallel()
	wantReported(t, "outside the API base path /api/v3/", func(ft *fakeT) {
		s := fakegithub.New(ft)
		s.Expect("GET", "/repos/o/r", fakegithub.JSONFile(200, example(t, "full-repository"))).Times(0)
		// What a client that joined "/repos/o/r" to the host, not the base, would send.
		do(t, "GET", strings.TrimSuffix(s.URL(), "/api/v3/")+"/repos/o/r", "")
	})
}

func TestBodyAndQueryMatchers(t *testing.T) {
	t.Parallel()
	var codes []int
	errs := inFake(t, func(ft *fakeT) {
		s := fakegithub.New(ft)
		s.Expect("PATCH", "/repos/o/r/check-runs/4", fakegithub.JSONFile(200, example(t, "check-run"))).
			JSONBody(map[string]any{"status": "completed", "output.title": "t", "name": fakegithub.Absent})
		s.Expect("GET", "/repos/o/r/pulls?state=open&page=", fakegithub.JSON(200, []any{}))
		for _, c := range []struct{ method, path, body string }{
			{"PATCH", "/repos/o/r/check-runs/4", `{"status":"completed","output":{"title":"t"},"name":""}`}, // name present
			{"PATCH", "/repos/o/r/check-runs/4", `{"status":"completed","output":{"title":"t"}}`},
			{"GET", "/repos/o/r/pulls?state=open&page=2", ""}, // page must be absent
			{"GET", "/repos/o/r/pulls?state=open&per_page=100", ""},
		} {
			code, _, _ := do(t, c.method, s.AbsURL(c.path), c.body)
			codes = append(codes, code)
		}
	})
	if want := []int{501, 200, 501, 200}; fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", codes, want)
	}
	all := joined(errs)
	for _, want := range []string{`body fields: name is present ("")`, `query page=["2"], want [""]`} {
		if !strings.Contains(all, want) {
			t.Errorf("reports lack %q:\n%s", want, all)
		}
	}
	if len(errs) != 2 {
		t.Errorf("want exactly the two unexpected calls reported, got %q", errs)
	}
}

func TestSchemaCheckCatchesUndocumentedAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, method, path string
		resp               func(t *testing.T) fakegithub.Responder
		want               string
	}{
		{"missing required key", "GET", "/repos/o/r/issues/comments/1", func(t *testing.T) fakegithub.Responder {
			m, err := fakegithub.Object(example(t, "issue-comment"))
			if err != nil {
				t.Fatal(err)
			}
			delete(m, "html_url")
			return fakegithub.JSON(200, m)
		}, `lacks the required key "html_url"`},
		{"wrong type", "PATCH", "/repos/o/r/issues/comments/1", func(t *testing.T) fakegithub.Responder {
			return fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": "1"})
		}, "$.id is a string, want an integer"},
		{"non RFC 3339 time", "GET", "/repos/o/r/issues/comments/1", func(t *testing.T) fakegithub.Responder {
			return fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"created_at": "2011/04/14 16:00:49 +0000"})
		}, "is not an RFC 3339 date-time"},
		{"undocumented status", "POST", "/repos/o/r/issues/1/comments", func(t *testing.T) fakegithub.Responder {
			return fakegithub.JSONFile(200, example(t, "issue-comment"))
		}, "does not document status 200"},
		{"no such operation", "GET", "/repos/o/r/comments-of-everything", func(t *testing.T) fakegithub.Responder {
			return fakegithub.JSON(200, map[string]any{})
		}, "is not an operation in GitHub's REST description"},
		{"enum", "PATCH", "/repos/o/r/check-runs/4", func(t *testing.T) fakegithub.Responder {
			return fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"status": "finished"})
		}, `$.status = "finished" is not one of`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wantReported(t, c.want, func(ft *fakeT) {
				s := fakegithub.New(ft)
				s.Expect(c.method, c.path, c.resp(t))
				do(t, c.method, s.AbsURL(c.path), `{}`)
			})
		})
	}
}

func TestUncheckedAndWithoutSchemaCheck(t *testing.T) {
	t.Parallel()
	errs := inFake(t, func(ft *fakeT) {
		s := fakegithub.New(ft)
		s.Expect("GET", "/repos/o/r/whatever", fakegithub.JSON(200, map[string]any{"x": 1}).Unchecked())
		do(t, "GET", s.AbsURL("/repos/o/r/whatever"), "")
		s2 := fakegithub.New(ft, fakegithub.WithoutSchemaCheck(), fakegithub.BasePath("/"))
		s2.Expect("GET", "/repos/o/r/whatever", fakegithub.JSON(200, map[string]any{"x": 1}))
		if !strings.HasSuffix(s2.URL(), "/") || strings.Contains(s2.URL(), "/api/v3") {
			ft.Errorf("root base URL %s", s2.URL())
		}
		do(t, "GET", s2.AbsURL("/repos/o/r/whatever"), "")
	})
	if len(errs) != 0 {
		t.Errorf("reported %q", errs)
	}
}

// The real secondary-limit answer keeps its headers; its recorded content-length (of
// the compact wire body) is dropped because the body file is pretty-printed.
func TestRecordedSecondaryRateLimit(t *testing.T) {
	t.Parallel()
	dir := testfix.Path(t, "github", "rate-limit")
	s := fakegithub.New(t)
	s.Expect("GET", "/repos/o/r", fakegithub.Recorded(dir+"/secondary-403.headers.txt", dir+"/secondary-403.body.json"))
	code, h, body := do(t, "GET", s.AbsURL("/repos/o/r"), "")
	if code != 403 || h.Get("Retry-After") != "60" || h.Get("X-Ratelimit-Remaining") != "" {
		t.Errorf("status %d retry-after %q remaining %q", code, h.Get("Retry-After"), h.Get("X-Ratelimit-Remaining"))
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(body), &m); err != nil || !strings.HasPrefix(m["message"], "You have exceeded a secondary rate limit") {
		t.Errorf("body %q (%v)", body, err)
	}
}

func TestOctokitRecording(t *testing.T) {
	t.Parallel()
	file := testfix.Path(t, "github", "octokit-fixtures", "add-labels-to-issue.normalized-fixture.json")
	its, err := fakegithub.OctokitScenario(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 2 || its[1].Method != "POST" || !strings.HasSuffix(its[1].Path, "/issues/1/labels") {
		t.Fatalf("interactions %+v", its)
	}
	s := fakegithub.New(t)
	s.Expect("POST", "/repos/o/r/issues/1/labels", fakegithub.Octokit(file, 1)).
		JSONBody(map[string]any{"labels": []string{"Foo", "bAr", "baZ"}})
	code, h, body := do(t, "POST", s.AbsURL("/repos/o/r/issues/1/labels"), string(its[1].Body))
	if code != 200 || h.Get("X-Ratelimit-Remaining") != "4999" || !strings.Contains(body, `"name":"bAr"`) && !strings.Contains(body, `"name": "bAr"`) {
		t.Errorf("status %d remaining %q body %.200s", code, h.Get("X-Ratelimit-Remaining"), body)
	}
}

func TestExampleFromTheDescription(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	s.Expect("GET", "/user", s.Example(200, "private-user-response-with-public-and-private-profile-information", map[string]any{"login": "perfbot-ci"}))
	_, _, body := do(t, "GET", s.AbsURL("/user"), "")
	if !strings.Contains(body, `"login":"perfbot-ci"`) {
		t.Errorf("body %.200s", body)
	}
}

func TestResponderErrorsSurfaceAtExpect(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T) fakegithub.Responder{
		"missing file": func(t *testing.T) fakegithub.Responder {
			return fakegithub.JSONFile(200, example(t, "no-such-example"))
		},
		"override typo": func(t *testing.T) fakegithub.Responder {
			return fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"usr.login": "x"})
		},
		"unknown example": func(t *testing.T) fakegithub.Responder { return fakegithub.Status(200) },
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			errs := inFake(t, func(ft *fakeT) {
				s := fakegithub.New(ft)
				r := mk(t)
				if name == "unknown example" {
					r = s.Example(200, "no-such-example", nil)
				}
				s.Expect("GET", "/repos/o/r", r)
				ft.Errorf("Expect returned")
			})
			if len(errs) == 0 || strings.Contains(joined(errs), "Expect returned") {
				t.Errorf("reported %q", errs)
			}
		})
	}
}

func TestSequenceRepeatsItsLastAnswer(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	s.Expect("GET", "/repos/o/r", fakegithub.Sequence(fakegithub.Status(503), fakegithub.JSONFile(200, example(t, "full-repository")))).Times(3)
	var codes []int
	for range 3 {
		code, _, _ := do(t, "GET", s.AbsURL("/repos/o/r"), "")
		codes = append(codes, code)
	}
	if fmt.Sprint(codes) != "[503 200 200]" {
		t.Errorf("statuses %v", codes)
	}
}
