package demo

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// sender signs and posts webhook deliveries to the server, as GitHub does.
type sender struct {
	url    string // the server's /webhook
	secret []byte
	client *http.Client
}

// delivery is one posted delivery and the server's answer.
type delivery struct {
	GUID   string
	Event  string
	Status int
}

func newGUID() string {
	b := make([]byte, 16)
	rand.Read(b) //nolint:errcheck // crypto/rand does not fail on Linux
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// post signs body with the webhook secret and posts it with GitHub's headers.
func (s *sender) post(ctx context.Context, event string, body []byte) (delivery, error) {
	d := delivery{GUID: newGUID(), Event: event}
	mac := hmac.New(sha256.New, s.secret)
	mac.Write(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return d, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/demo")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", d.GUID)
	req.Header.Set("X-GitHub-Hook-ID", "1")
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := s.client.Do(req)
	if err != nil {
		return d, fmt.Errorf("posting the %s delivery: %w", event, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) //nolint:errcheck // the status is what counts
	d.Status = resp.StatusCode
	if resp.StatusCode/100 != 2 {
		return d, fmt.Errorf("the server answered the %s delivery %s with %s", event, d.GUID, resp.Status)
	}
	return d, nil
}

// commentEvent is the issue_comment "created" payload GitHub sends for comment c on
// issue (a pull request when pr is true) of owner/name.
func commentEvent(owner, name string, issue int, pr bool, c fakegithub.Comment, userID int64) ([]byte, error) {
	full := owner + "/" + name
	user := &github.User{Login: github.String(c.User), ID: github.Int64(userID), Type: github.String("User")}
	is := &github.Issue{
		Number: github.Int(issue), Title: github.String("demo"), State: github.String("open"),
		User: user, HTMLURL: github.String(fmt.Sprintf("http://github.invalid/%s/issues/%d", full, issue)),
	}
	if pr {
		is.PullRequestLinks = &github.PullRequestLinks{URL: github.String(fmt.Sprintf("http://github.invalid/repos/%s/pulls/%d", full, issue))}
	}
	ev := github.IssueCommentEvent{
		Action: github.String("created"),
		Issue:  is,
		Comment: &github.IssueComment{
			ID: github.Int64(c.ID), Body: github.String(c.Body), User: user,
			CreatedAt: &github.Timestamp{Time: c.Created}, UpdatedAt: &github.Timestamp{Time: c.Updated},
			AuthorAssociation: github.String("CONTRIBUTOR"),
			HTMLURL:           github.String(fmt.Sprintf("http://github.invalid/%s/issues/%d#issuecomment-%d", full, issue, c.ID)),
		},
		Repo: &github.Repository{
			Name: github.String(name), FullName: github.String(full), Owner: &github.User{Login: github.String(owner)},
			DefaultBranch: github.String("main"), Private: github.Bool(false),
		},
		Sender:       user,
		Installation: &github.Installation{ID: github.Int64(fakegithub.InstallationID)},
	}
	return json.Marshal(ev)
}

// runEvent is the workflow_run payload GitHub sends when a run changes state.
func runEvent(owner, name string, run fakegithub.Run, action string) ([]byte, error) {
	full := owner + "/" + name
	ev := github.WorkflowRunEvent{
		Action: github.String(action),
		WorkflowRun: &github.WorkflowRun{
			ID: github.Int64(run.ID), Name: github.String(run.Workflow), DisplayTitle: github.String(run.Title),
			HeadBranch: github.String(run.Branch), HeadSHA: github.String(run.HeadSHA),
			Event: github.String("workflow_dispatch"), Status: github.String(run.Status), Conclusion: nilIfEmpty(run.Conclusion),
			HTMLURL:   github.String(fmt.Sprintf("http://github.invalid/%s/actions/runs/%d", full, run.ID)),
			CreatedAt: &github.Timestamp{Time: run.Created}, UpdatedAt: &github.Timestamp{Time: run.Updated},
			RunStartedAt: &github.Timestamp{Time: run.Created},
		},
		Repo: &github.Repository{
			Name: github.String(name), FullName: github.String(full), Owner: &github.User{Login: github.String(owner)},
			DefaultBranch: github.String("main"),
		},
		Sender:       &github.User{Login: github.String("perfbot[bot]"), Type: github.String("Bot")},
		Installation: &github.Installation{ID: github.Int64(fakegithub.InstallationID)},
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	// GitHub's payload names the run's workflow file; go-github's type has no field for it.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["workflow_run"].(map[string]any)["path"] = ".github/workflows/" + run.Workflow
	return json.Marshal(m)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// waitFor polls cond until it holds or the deadline passes; the demo's steps wait on
// what the server does in the background.
func waitFor(ctx context.Context, d time.Duration, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
