package gittest

import (
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// HTTPServer is git's own smart-HTTP server (git http-backend under net/http/cgi) on
// 127.0.0.1, serving one bare repository and accepting only one token, sent the way
// git sends an installation token to GitHub (basic auth as x-access-token).
type HTTPServer struct {
	URL string // of the repository
	mu  sync.Mutex
	// auths lists the Authorization headers of every request, one entry per request.
	auths [][]string
}

// NewHTTPServer serves the bare repository bare until the test ends.
func NewHTTPServer(t testing.TB, bare, token string) *HTTPServer {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Root: "/git",
		Env: []string{
			"GIT_PROJECT_ROOT=" + filepath.Dir(bare),
			"GIT_HTTP_EXPORT_ALL=1",
			// http-backend serves pushes only to an authenticated user.
			"REMOTE_USER=x-access-token",
		},
		InheritEnv: []string{"HOME", "GIT_CONFIG_NOSYSTEM", "PATH"},
	}
	want := basicAuth(token)
	s := &HTTPServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/git/", func(w http.ResponseWriter, req *http.Request) {
		got := req.Header.Values("Authorization")
		s.mu.Lock()
		s.auths = append(s.auths, got)
		s.mu.Unlock()
		if len(got) != 1 || !strings.EqualFold(got[0], want) {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "bad credentials", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, req)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/git/" + filepath.Base(bare)
	return s
}

// Requests returns how many requests came with exactly token, and how many did not.
func (s *HTTPServer) Requests(token string) (good, bad int) {
	want := basicAuth(token)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.auths {
		if len(a) == 1 && strings.EqualFold(a[0], want) {
			good++
		} else {
			bad++
		}
	}
	return good, bad
}

func basicAuth(token string) string {
	return "basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
}
