package gh

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	ghstub "github.com/lablup/perfbot/internal/fakegithub"
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
	for _, r := range []ghstub.Responder{
		ghstub.JSON(401, map[string]string{"message": "Bad credentials"}),
		ghstub.JSON(403, map[string]string{"message": "Resource not accessible by personal access token"}),
		ghstub.JSON(404, map[string]string{"message": "Not Found"}),
		ghstub.Status(502),
		ghstub.Status(502),
		ghstub.Recorded(rateLimitFile(t, "secondary-403.headers.txt"), rateLimitFile(t, "secondary-403.body.json")),
		ghstub.Recorded(rateLimitFile(t, "secondary-403.headers.txt"), rateLimitFile(t, "secondary-403.body.json")),
		ghstub.JSON(403, map[string]string{"message": "API rate limit exceeded"}).Header("X-Ratelimit-Remaining", "0").Header("X-Ratelimit-Reset", reset),
	} {
		e.s.Expect("GET", repoPath, r).Match(ghstub.Header("Authorization", "Bearer "+token))
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
