package gh

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// ErrNotFound matches (errors.Is) an API answer of 404: the repository, issue, comment
// or user does not exist, or the credentials cannot see it.
var ErrNotFound = errors.New("not found on GitHub")

// ErrForbidden matches (errors.Is) an API answer of 403 that is not a rate limit: the
// credentials lack a permission. The error text names the permission.
var ErrForbidden = errors.New("forbidden by GitHub")

// APIError is a GitHub answer that was not a success and not a rate limit.
type APIError struct {
	Op      string // what was being done, e.g. "creating a pull request in o/r"
	Method  string
	Path    string // the URL path, without host or query
	Status  int
	Message string   // GitHub's message
	Details []string // GitHub's per-field validation errors, if any
	Need    string   // the permission the call needs, e.g. "pull_requests: write"
}

func (e *APIError) Error() string {
	var b strings.Builder
	answer := fmt.Sprintf("GitHub answered %d", e.Status)
	if e.Message != "" {
		answer += ": " + e.Message
	}
	if len(e.Details) > 0 {
		answer += " (" + strings.Join(e.Details, "; ") + ")"
	}
	switch e.Status {
	case http.StatusForbidden:
		need := e.Need
		if need == "" {
			need = "a permission it lacks"
		} else {
			need = "`" + need + "`"
		}
		fmt.Fprintf(&b, "%s needs %s (%s); grant it to the token or the App installation", e.Op, need, answer)
	case http.StatusNotFound:
		fmt.Fprintf(&b, "%s: not found (%s); check the name or number, and that the credentials can see the repository", e.Op, answer)
	case http.StatusUnauthorized:
		fmt.Fprintf(&b, "%s: the credentials were refused (%s); check that the token is valid and not expired, or the App id and key", e.Op, answer)
	default:
		fmt.Fprintf(&b, "%s: %s", e.Op, answer)
		if e.Status >= 500 {
			b.WriteString("; a fault on GitHub's side, retry later")
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) and errors.Is(err, ErrForbidden) work.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	}
	return false
}

// RateLimitError says GitHub's rate limit stopped a call and waiting for it would have
// taken longer than allowed (Options.MaxWait) or retries ran out.
type RateLimitError struct {
	Secondary bool      // the secondary (abuse) limit rather than the hourly quota
	RetryAt   time.Time // when GitHub said the call may be tried again
	Message   string    // GitHub's message, if it sent one
}

func (e *RateLimitError) Error() string {
	kind := "primary (hourly quota)"
	if e.Secondary {
		kind = "secondary"
	}
	msg := fmt.Sprintf("GitHub %s rate limit reached", kind)
	if e.Message != "" {
		msg += " (" + firstSentence(e.Message) + ")"
	}
	return msg + "; retry after " + e.RetryAt.UTC().Format(time.RFC3339)
}

// firstSentence keeps rate-limit messages short: GitHub appends terms-of-service prose.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// wrap turns what go-github, the transport or ghinstallation returned into this
// package's errors, naming the operation and the permission it needs.
func wrap(err error, op, need string) error {
	if err == nil {
		return nil
	}
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return fmt.Errorf("%s: %w", op, rl)
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %w", op, ae)
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return newAPIError(op, need, er.Response, er.Message, er.Errors)
	}
	// go-github keeps its own rate memory; the transport normally answers first, but map
	// these too so no go-github type leaks out.
	var grl *github.RateLimitError
	if errors.As(err, &grl) {
		return fmt.Errorf("%s: %w", op, &RateLimitError{RetryAt: grl.Rate.Reset.Time, Message: grl.Message})
	}
	var gab *github.AbuseRateLimitError
	if errors.As(err, &gab) {
		at := time.Now()
		if gab.RetryAfter != nil {
			at = at.Add(*gab.RetryAfter)
		}
		return fmt.Errorf("%s: %w", op, &RateLimitError{Secondary: true, RetryAt: at, Message: gab.Message})
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	// url.Error repeats the full URL; the operation name says enough.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s: %w", op, err)
}

func newAPIError(op, need string, resp *http.Response, message string, details []github.Error) *APIError {
	e := &APIError{Op: op, Status: resp.StatusCode, Message: message, Need: need}
	if resp.Request != nil {
		e.Method = resp.Request.Method
		if resp.Request.URL != nil {
			e.Path = resp.Request.URL.Path
		}
	}
	for _, d := range details {
		switch {
		case d.Message != "":
			e.Details = append(e.Details, d.Message)
		case d.Field != "":
			e.Details = append(e.Details, fmt.Sprintf("%s %s: %s", d.Resource, d.Field, d.Code))
		case d.Code != "":
			e.Details = append(e.Details, d.Code)
		}
	}
	return e
}

// ambiguous reports whether a failed write may still have taken effect on GitHub: a
// server error or a broken connection, as opposed to a refusal.
func ambiguous(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500
	}
	return true
}

func statusIs(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}
