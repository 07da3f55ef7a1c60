package gh

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentAPI is a raw listener on 127.0.0.1 that reads each request's head and then
// holds the connection without answering, or, with head set, answers that status
// line and headers and never sends the body. It counts the requests it read.
type silentAPI struct {
	ln    net.Listener
	head  string
	reqs  chan string // "METHOD PATH" of each request read
	mu    sync.Mutex
	conns []net.Conn
}

func newSilentAPI(t *testing.T, head string) *silentAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &silentAPI{ln: ln, head: head, reqs: make(chan string, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			a.mu.Lock()
			a.conns = append(a.conns, c)
			a.mu.Unlock()
			go func() {
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					return
				}
				f := strings.Fields(line)
				if len(f) >= 2 {
					a.reqs <- f[0] + " " + f[1]
				}
				if a.head != "" {
					_, _ = c.Write([]byte(a.head))
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, c := range a.conns {
			c.Close()
		}
	})
	return a
}

func (a *silentAPI) url() string { return "http://" + a.ln.Addr().String() + "/" }

func silentClient(t *testing.T, a *silentAPI, timeout time.Duration) *Client {
	t.Helper()
	c, err := NewTokenClient("ghp_testtoken0123456789", Options{
		BaseURL: a.url(), Login: botLogin, Timeout: timeout, Sleep: (&sleeps{}).sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDispatchThatNeverAnswersTimesOut: GitHub takes the workflow dispatch and never
// answers. The call fails with a TimeoutError once the configured timeout has passed,
// is sent once (a POST is not repeated), and counts as one that may have happened.
func TestDispatchThatNeverAnswersTimesOut(t *testing.T) {
	t.Parallel()
	a := newSilentAPI(t, "")
	c := silentClient(t, a, 50*time.Millisecond)
	done := make(chan error, 1)
	go func() {
		done <- c.DispatchWorkflow(context.Background(), testRepo, "perfbot.yml", "main", map[string]any{"job": "profile"})
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the dispatch did not fail within a minute of a 50 ms timeout")
	}
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want a *TimeoutError", err, err)
	}
	if te.Method != "POST" || !strings.HasSuffix(te.Path, "/actions/workflows/perfbot.yml/dispatches") || te.After != 50*time.Millisecond {
		t.Errorf("TimeoutError %+v", te)
	}
	if want := "GitHub did not answer POST /repos/lablup/mlxcel/actions/workflows/perfbot.yml/dispatches within 50ms"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	if !MayHaveHappened(err) {
		t.Error("a dispatch that timed out must count as one that may have happened")
	}
	if got := len(a.reqs); got != 1 {
		t.Errorf("%d requests reached the API, want 1 (a timed-out POST is not repeated)", got)
	}
}

// TestBodyThatNeverEndsTimesOut: GitHub answers the head of a GET and never sends the
// body it announced; reading it fails with the TimeoutError, and the GET is not
// repeated within the call.
func TestBodyThatNeverEndsTimesOut(t *testing.T) {
	t.Parallel()
	a := newSilentAPI(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"default_branch\":")
	c := silentClient(t, a, 50*time.Millisecond)
	_, err := c.DefaultBranch(context.Background(), testRepo)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want a *TimeoutError", err, err)
	}
	if got := len(a.reqs); got != 1 {
		t.Errorf("%d requests reached the API, want 1", got)
	}
}

// TestTimeoutIsPerAttempt: a call whose context ends first reports the context's
// error, not a timeout; and a negative Timeout sets no bound of its own.
func TestTimeoutIsPerAttempt(t *testing.T) {
	t.Parallel()
	a := newSilentAPI(t, "")
	c := silentClient(t, a, -1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.DispatchWorkflow(ctx, testRepo, "perfbot.yml", "main", nil) }()
	<-a.reqs // the request is at the API: only the caller can end the wait now
	cancel()
	err := <-done
	var te *TimeoutError
	if errors.As(err, &te) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled and no TimeoutError", err)
	}
	if MayHaveHappened(err) {
		t.Error("a call the caller cancelled is reported as one that may have happened")
	}
}

func TestDefaultTimeout(t *testing.T) {
	o, _, err := Options{}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if o.Timeout != 30*time.Second {
		t.Errorf("default timeout %s", o.Timeout)
	}
}

// TestConnectionErrorIsNotATimeout: a connection GitHub's side closes at once, or one
// refused, fails with its own error long before the deadline, and must not be reported
// as "GitHub did not answer within" the timeout.
func TestConnectionErrorIsNotATimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closing := "http://" + ln.Addr().String() + "/"
	t.Cleanup(func() { ln.Close() })
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String() + "/"
	refused.Close()
	for name, u := range map[string]string{"closed at once": closing, "refused": refusedURL} {
		c, err := NewTokenClient("ghp_testtoken0123456789", Options{BaseURL: u, Login: botLogin, Timeout: time.Hour, MaxRetries: -1, Sleep: (&sleeps{}).sleep})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.DefaultBranch(context.Background(), Repo{Owner: "o", Name: "r"})
		var te *TimeoutError
		if err == nil || errors.As(err, &te) || strings.Contains(err.Error(), "did not answer") {
			t.Errorf("%s: %v, want the connection's own error", name, err)
		}
	}
}
