package action

import (
	"fmt"
	"testing"

	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// Without PERFBOT_BOT_LOGIN the gate job with the Actions token knows its own login,
// github-actions[bot]: its reply to a refused command looks for its earlier reply
// among that account's comments without asking GitHub who it is (GET /user, which
// GitHub refuses to the Actions token; the stub fails on any call it was not told of).
func TestGateJobRepliesAsTheActionsToken(t *testing.T) {
	t.Parallel()
	var c gatetest.Case
	for _, k := range gatetest.Cases() {
		if k.Want.Outcome == gate.Denied && k.Want.Reply != "" {
			c = k
			break
		}
	}
	if c.Name == "" {
		t.Fatal("gatetest has no refused case with a reply")
	}
	s := fakegithub.New(t)
	c.Expect(t, s)
	comments := fmt.Sprintf("/repos/%s/issues/%d/comments", c.Repo(t), c.Issue(t))
	s.Expect("GET", comments, fakegithub.JSON(200, []any{}))
	s.Expect("POST", comments, s.Example(201, "issue-comment", map[string]any{"user.login": DefaultTokenLogin}))
	e := gateEnv(t, c, s, nil)
	delete(e.vars, EnvBotLogin)
	res, log, err := runGate(e)
	if err != nil {
		t.Fatalf("gate job: %v\n%s", err, log)
	}
	c.Check(t, res.gate.Decision)
	if v := readOutputs(t, e.output)["verdict"]; v != VerdictDenied {
		t.Errorf("verdict %q\n%s", v, log)
	}
}
