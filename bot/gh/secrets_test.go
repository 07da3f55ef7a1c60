package gh

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/fakegithub"
)

// Every failure path of a token Client, and its log, stays free of the token, while the
// token does reach GitHub (so the check is not vacuous).
func TestTokenNeverInErrorsOrLogs(t *testing.T) {
	t.Parallel()
	const token = "ghp_SECRETs3cr3tSECRETs3cr3tSECRET0001"
	e := newEnv(t)
	c, err := NewTokenClient(token+"\n", Options{
		BaseURL: e.s.URL(), Login: botLogin, Sleep: e.sleeps.sleep,
		Now: func() time.Time { return testNow }, Logger: e.c.o.Logger, MaxRetries: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	reset := strconv.FormatInt(testNow.Add(time.Hour).Unix(), 10)
	for _, r := range []fakegithub.Responder{
		fakegithub.JSON(401, map[string]string{"message": "Bad credentials"}),
		fakegithub.JSON(403, map[string]string{"message": "Resource not accessible by personal access token"}),
		fakegithub.JSON(404, map[string]string{"message": "Not Found"}),
		fakegithub.Status(502),
		fakegithub.Status(502),
		fakegithub.Recorded(rateLimitFile(t, "secondary-403.headers.txt"), rateLimitFile(t, "secondary-403.body.json")),
		fakegithub.Recorded(rateLimitFile(t, "secondary-403.headers.txt"), rateLimitFile(t, "secondary-403.body.json")),
		fakegithub.JSON(403, map[string]string{"message": "API rate limit exceeded"}).Header("X-Ratelimit-Remaining", "0").Header("X-Ratelimit-Reset", reset),
	} {
		e.s.Expect("GET", repoPath, r).Match(fakegithub.Header("Authorization", "Bearer "+token))
	}
	var msgs []string
	for range 6 {
		_, err := c.DefaultBranch(context.Background(), testRepo)
		if err == nil {
			t.Fatal("no error")
		}
		msgs = append(msgs, err.Error())
	}
	_, err = NewTokenClient("x "+token, Options{})
	msgs = append(msgs, err.Error(), e.log.String())
	all := strings.Join(msgs, "\n")
	if strings.Contains(all, "s3cr3t") {
		t.Errorf("the token leaked:\n%s", all)
	}
	if !strings.Contains(all, "Bad credentials") || !strings.Contains(all, "github: retrying") {
		t.Errorf("the failures did not happen as planned:\n%s", all)
	}
}
