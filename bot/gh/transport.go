package gh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/bot/logkey"
)

// Retry policy, in one place (docs/github.md explains it for users):
//
//   - A rate-limited answer (429, or 403 with retry-after, x-ratelimit-remaining: 0 or
//     a rate-limit message) is retried for every method, POST included: GitHub refused
//     the request before acting on it. The wait is retry-after, else the time until
//     x-ratelimit-reset (+1 s, the header has one-second granularity), else one minute
//     doubling per attempt, as GitHub's documentation asks.
//   - 500/502/503/504 and broken connections are retried with exponential backoff for
//     methods that are safe to repeat: GET, HEAD, PUT, PATCH, DELETE (perfbot's PATCHes
//     set absolute values), and a POST only when the caller marked it repeatable (a
//     reaction, minting an installation token, opening a pull request, which GitHub
//     refuses to duplicate). A comment POST is never repeated blindly: the Client looks
//     for the comment by its marker first.
//   - Each attempt is bounded by Timeout (connecting, the answer and reading its body):
//     one that runs out fails with a TimeoutError and is not repeated within the call,
//     so a hung GitHub costs one Timeout per call, and a write that timed out counts as
//     one that may have happened (MayHaveHappened).
//   - A wait longer than MaxWait, or running out of retries, ends with a RateLimitError
//     that says when to retry, and later calls on the same Client wait for (or refuse
//     until) that time instead of hammering GitHub.
const (
	defaultMaxRetries = 3
	defaultMaxWait    = 2 * time.Minute
	firstBackoff      = time.Second
	maxBackoff        = 30 * time.Second
	secondaryFallback = time.Minute
	resetBuffer       = time.Second
)

type ctxKey int

const (
	limiterKey ctxKey = iota
	repeatableKey
)

// repeatable marks a POST that is safe to send again after a server error.
func repeatable(ctx context.Context) context.Context {
	return context.WithValue(ctx, repeatableKey, true)
}

// limiter remembers, per credential holder (one per Client), until when GitHub asked us
// to stay away. It travels in the request context because ghinstallation shares one
// underlying transport between installations, whose limits are separate.
type limiter struct {
	mu        sync.Mutex
	notBefore time.Time
	secondary bool
	message   string
}

func (l *limiter) set(at time.Time, secondary bool, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at.After(l.notBefore) {
		l.notBefore, l.secondary, l.message = at, secondary, message
	}
}

func (l *limiter) get() (time.Time, bool, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.notBefore, l.secondary, l.message
}

func (l *limiter) clear(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.notBefore.Equal(at) {
		l.notBefore, l.secondary, l.message = time.Time{}, false, ""
	}
}

// transport is the retry and rate-limit layer, the innermost RoundTripper: auth layers
// (oauth2, ghinstallation) sit above it, so installation-token minting gets the same
// treatment as API calls.
type transport struct {
	base       http.RoundTripper
	maxRetries int
	maxWait    time.Duration
	sleep      func(context.Context, time.Duration) error
	now        func() time.Time
	log        *slog.Logger
	fallback   *limiter      // for requests that carry no Client limiter
	timeout    time.Duration // per attempt; <= 0: none
}

func newTransport(o Options) *transport {
	return &transport{
		base:       http.DefaultTransport,
		maxRetries: o.MaxRetries,
		maxWait:    o.MaxWait,
		sleep:      o.Sleep,
		now:        o.Now,
		log:        o.Logger,
		fallback:   &limiter{},
		timeout:    o.Timeout,
	}
}

// TimeoutError is an attempt GitHub did not answer (or finish answering) within the
// Options.Timeout. The request may have reached GitHub.
type TimeoutError struct {
	Method, Path string
	After        time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("GitHub did not answer %s %s within %s", e.Method, e.Path, e.After)
}

// Timeout tells net/http and callers that look for it that this is a timeout.
func (e *TimeoutError) Timeout() bool { return true }

// attempt sends one attempt of req under the per-attempt deadline. The deadline keeps
// running while the caller reads the answer's body; closing the body ends it.
func (t *transport) attempt(r *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.base.RoundTrip(r)
	}
	parent := r.Context()
	actx, cancel := context.WithTimeout(parent, t.timeout)
	// Only the attempt's own deadline makes a TimeoutError: cancel() also sets actx.Err,
	// and a connection error or the caller's own deadline must keep its own error.
	timedOut := func() bool { return errors.Is(actx.Err(), context.DeadlineExceeded) && parent.Err() == nil }
	terr := &TimeoutError{Method: r.Method, Path: r.URL.Path, After: t.timeout}
	resp, err := t.base.RoundTrip(r.WithContext(actx))
	if err != nil {
		cancel()
		if timedOut() {
			return nil, terr
		}
		return nil, err
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		cancel()
		return resp, nil
	}
	resp.Body = &deadlineBody{ReadCloser: resp.Body, cancel: cancel, timedOut: timedOut, err: terr}
	return resp, nil
}

// deadlineBody ends an attempt's deadline when its body is closed, and reports a read
// cut short by the deadline as the attempt's TimeoutError.
type deadlineBody struct {
	io.ReadCloser
	cancel   context.CancelFunc
	timedOut func() bool
	err      *TimeoutError
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.timedOut() {
		err = b.err
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	lim, _ := ctx.Value(limiterKey).(*limiter)
	if lim == nil {
		lim = t.fallback
	}
	if err := t.waitLimiter(ctx, lim, req); err != nil {
		closeBody(req)
		return nil, err
	}
	serverRetry := req.Method != http.MethodPost || ctx.Value(repeatableKey) != nil ||
		// ghinstallation builds this request itself; a second token is harmless.
		strings.HasSuffix(req.URL.Path, "/access_tokens")
	canRewind := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil

	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			var err error
			if r, err = rewind(req); err != nil {
				return nil, fmt.Errorf("replaying the request body: %w", err)
			}
		}
		resp, err := t.attempt(r)
		last := attempt >= t.maxRetries || !canRewind

		if err != nil {
			var te *TimeoutError
			if ctx.Err() != nil || !serverRetry || last || errors.As(err, &te) {
				return nil, err
			}
			if werr := t.pause(ctx, req, 0, backoff(attempt), attempt, "connection error"); werr != nil {
				return nil, werr
			}
			continue
		}

		if wait, secondary, limited := rateLimited(resp, t.now(), attempt); limited {
			msg := githubMessage(resp)
			at := t.now().Add(wait)
			if last || wait > t.maxWait {
				lim.set(at, secondary, msg)
				t.log.Warn("github: rate limited, giving up", "method", req.Method, "path", req.URL.Path,
					"status", resp.StatusCode, "retry_at", at.UTC().Format(time.RFC3339))
				return nil, &RateLimitError{Secondary: secondary, RetryAt: at, Message: msg}
			}
			if werr := t.pause(ctx, req, resp.StatusCode, wait, attempt, "rate limited"); werr != nil {
				return nil, werr
			}
			continue
		}

		if serverRetry && !last && retryableStatus(resp.StatusCode) {
			wait := backoff(attempt)
			if ra, ok := retryAfter(resp.Header, t.now()); ok && ra <= t.maxWait {
				wait = ra
			}
			discard(resp)
			if werr := t.pause(ctx, req, resp.StatusCode, wait, attempt, "server error"); werr != nil {
				return nil, werr
			}
			continue
		}

		// The last call of the hour succeeded: the next one would be refused.
		if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
			if reset, ok := resetTime(resp.Header); ok && reset.After(t.now()) {
				lim.set(reset.Add(resetBuffer), false, "quota used up by the previous call")
			}
		}
		return resp, nil
	}
}

// waitLimiter holds a request back while an earlier answer asked us to wait.
func (t *transport) waitLimiter(ctx context.Context, lim *limiter, req *http.Request) error {
	at, secondary, msg := lim.get()
	if at.IsZero() {
		return nil
	}
	wait := at.Sub(t.now())
	if wait <= 0 {
		lim.clear(at)
		return nil
	}
	if wait > t.maxWait {
		return &RateLimitError{Secondary: secondary, RetryAt: at, Message: msg}
	}
	t.log.Info("github: waiting for an earlier rate limit", "method", req.Method, "path", req.URL.Path, logkey.WaitMS, wait.Milliseconds())
	if err := t.sleep(ctx, wait); err != nil {
		return err
	}
	lim.clear(at)
	return nil
}

func (t *transport) pause(ctx context.Context, req *http.Request, status int, wait time.Duration, attempt int, why string) error {
	t.log.Warn("github: retrying", "reason", why, "method", req.Method, "path", req.URL.Path,
		"status", status, logkey.WaitMS, wait.Milliseconds(), "attempt", attempt+1)
	return t.sleep(ctx, wait)
}

// rateLimited decides whether resp is a rate-limit refusal and how long to wait.
func rateLimited(resp *http.Response, now time.Time, attempt int) (wait time.Duration, secondary, limited bool) {
	h := resp.Header
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
	case http.StatusForbidden:
		if h.Get("Retry-After") == "" && h.Get("X-Ratelimit-Remaining") != "0" &&
			!strings.Contains(strings.ToLower(peekMessage(resp)), "rate limit") {
			return 0, false, false
		}
	default:
		return 0, false, false
	}
	if ra, ok := retryAfter(h, now); ok {
		return ra, h.Get("X-Ratelimit-Remaining") != "0", true
	}
	if h.Get("X-Ratelimit-Remaining") == "0" {
		if reset, ok := resetTime(h); ok {
			wait := reset.Sub(now) + resetBuffer
			if wait < resetBuffer {
				wait = resetBuffer
			}
			return wait, false, true
		}
	}
	return min(secondaryFallback<<attempt, 16*secondaryFallback), true, true
}

func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		d := at.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

func resetTime(h http.Header) (time.Time, bool) {
	secs, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-Ratelimit-Reset")), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func backoff(attempt int) time.Duration {
	d := firstBackoff << attempt
	if d > maxBackoff || d <= 0 {
		return maxBackoff
	}
	return d
}

// peekMessage reads GitHub's error message and puts the body back for go-github.
func peekMessage(resp *http.Response) string {
	if resp.Body == nil {
		return ""
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &m)
	return m.Message
}

// githubMessage reads the message and closes the body: the response is not returned.
func githubMessage(resp *http.Response) string {
	msg := peekMessage(resp)
	resp.Body.Close()
	return msg
}

func discard(resp *http.Response) {
	if resp.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	}
}

func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// sleepCtx is the default Options.Sleep.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
