package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestGateCases runs the gate's shared table through the whole server: each case's
// payload, signed, over HTTP into the inbox, through the gate against the API stub,
// and the server's answer on GitHub: nothing for an ignored comment, a reply with the
// reason for a denial, and for an accepted run the eyes reaction, the status comment,
// the check run on a pull request and the dispatch with the pinned SHA.
func TestGateCases(t *testing.T) {
	t.Parallel()
	for i, c := range gatetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			stub := fakegithub.New(t)
			c.Expect(t, stub)
			r := start(t, stub, nil)
			body := edit(t, c.Event(t), nil)
			var p struct {
				Comment struct {
					ID int64 `json:"id"`
				} `json:"comment"`
				Issue struct {
					PR any `json:"pull_request"`
				} `json:"issue"`
			}
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			repo, issue, isPR := c.Repo(t), c.Issue(t), p.Issue.PR != nil
			w := c.Want
			if w.Outcome != gate.Ignored {
				expectToken(t, stub)
			}
			switch {
			case w.Outcome == gate.Ignored:
			case w.Outcome == gate.Denied, w.Kind == command.Help:
				expectReply(t, stub, repo, issue, p.Comment.ID, w.Reply)
			case w.Kind == command.Status:
				expectReply(t, stub, repo, issue, p.Comment.ID, "No perfbot request is queued or running")
			case w.Kind == command.Cancel:
				expectReply(t, stub, repo, issue, p.Comment.ID, "There is no perfbot request `"+w.ID+"`")
			default:
				in := map[string]any{
					"ref": gatetest.DefaultBranch, "inputs.job": string(w.Kind),
					"inputs.models": strings.Join(w.Models, ","), "inputs.sampling": strings.Join(w.Sampling, ","),
					"inputs.epic": fmt.Sprint(w.Epic),
				}
				switch {
				case w.Compare:
					// A compare dispatches its pinned A and its repeats beside B (sha).
					in["inputs.base"], in["inputs.repeats"] = w.Base, fmt.Sprint(w.Repeats)
				case w.Kind == command.Bisect:
					// A bisection dispatches its good end beside the bad one (sha), no repeats.
					in["inputs.base"], in["inputs.repeats"] = w.Base, fakegithub.Absent
				default:
					in["inputs.base"], in["inputs.repeats"] = fakegithub.Absent, fakegithub.Absent
				}
				// A bisection's commits are the default branch's: no check run on a pull request.
				expectAccepted(t, stub, repo, issue, isPR && w.Kind != command.Bisect, p.Comment.ID, 1, w.SHA, in)
			}
			if err := r.deliver("issue_comment", fmt.Sprintf("00000000-0000-4000-8000-%012d", i), body); err != nil {
				t.Fatalf("processing: %v", err)
			}
			if w.Outcome == gate.Accepted && (w.Kind == command.Profile || w.Kind == command.Bench || w.Kind == command.Bisect) {
				r.waitDispatched(1)
			}
		})
	}
}
