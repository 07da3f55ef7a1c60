package action

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/report"
)

// gateResult is what the gate job decided and did.
type gateResult struct {
	Decision gate.Decision
	// Replied and Reacted are the comment written and the reaction made ("" for none).
	Replied string
	Reacted string
}

// Verdicts of the gate job besides the accepted command's kind (profile, bench, bisect,
// help, status, cancel): the workflow runs its profile, bench or bisect job on the
// kind.
const (
	VerdictIgnored = "ignored"
	VerdictDenied  = "denied"
)

// gate decides on an issue_comment event with the bot server's rules (bot/gate:
// command parsing, the commenter's permission, fork refusal, the pinned SHA), answers
// on the thread, and hands an accepted run to the GPU job as outputs. It needs no
// checkout: the config is read from the default branch through the API.
func (s *step) gate(ctx context.Context) (*gateResult, error) {
	if name := s.rt.Getenv("GITHUB_EVENT_NAME"); name != "issue_comment" {
		return nil, fmt.Errorf("job gate decides on issue_comment events, and this is %q: run it only `if: github.event_name == 'issue_comment'`", name)
	}
	payload, err := s.event()
	if err != nil {
		return nil, err
	}
	ev, err := gate.ParseEvent(payload)
	if err != nil {
		return nil, err
	}
	c, err := s.client(ctx, ev.Repo)
	if err != nil {
		return nil, err
	}
	d, err := gate.Decide(ctx, ev, c, gate.Options{BotLogin: s.botLogin(), ConfigPath: s.in.Config})
	if err != nil {
		return nil, err
	}
	res := &gateResult{Decision: d}

	verdict, reply, reaction, run := VerdictIgnored, "", "", false
	switch d.Outcome {
	case gate.Denied:
		// As the server does: a refusal gets a reply that says why, and no reaction.
		verdict, reply = VerdictDenied, d.Reply
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: command refused (" + string(d.Reason) + ")", Message: d.Reply})
	case gate.Accepted:
		verdict = string(d.Request.Kind)
		switch d.Request.Kind {
		case command.Profile, command.Bench, command.Bisect:
			run, reaction = true, "eyes"
		case command.Help:
			reply = d.Reply
		case command.Status, command.Cancel, command.Accept:
			reply = noServerReply(d.Request.Kind, s.runsURL())
		}
	default:
		s.rt.Annotate(Annotation{Level: Notice, Title: "perfbot: comment ignored (" + string(d.Reason) + ")", Message: d.Detail})
	}

	var errs []error
	if !s.in.DryRun {
		if reply != "" {
			// One reply per command comment, the server's: a rerun of the job edits it.
			if err := gate.Reply(ctx, c, ev, reply); err != nil {
				errs = append(errs, fmt.Errorf("answering the command: %w", err))
			} else {
				res.Replied = reply
			}
		}
		if reaction != "" {
			if err := c.React(ctx, ev.Repo, ev.CommentID, reaction); err != nil {
				errs = append(errs, err)
			} else {
				res.Reacted = reaction
			}
		}
	}

	outs := []string{"verdict", verdict, "accepted", strconv.FormatBool(run)}
	if run {
		r := d.Request
		id := s.in.RequestID
		if id == "" {
			id = "comment-" + strconv.FormatInt(ev.CommentID, 10)
		}
		epic := ""
		if r.Epic > 0 {
			epic = strconv.Itoa(r.Epic)
		}
		outs = append(outs, "request-id", id, "sha", r.SHA, "models", strings.Join(r.Models, ","),
			"sampling", strings.Join(r.Sampling, ","), "epic", epic, "trigger-comment-id", strconv.FormatInt(ev.CommentID, 10))
		// A compare hands A on beside B (sha), with its cap of repeats per side; a
		// bisection its last good commit beside the first bad one (sha), its one model
		// in models; both are empty otherwise, and the GPU job runs one commit.
		base, repeats := "", ""
		switch {
		case r.Compare:
			base, repeats = r.Base, strconv.Itoa(r.Repeats)
		case r.Kind == command.Bisect:
			base = r.Base
		}
		outs = append(outs, "base", base, "repeats", repeats)
		s.rt.Annotate(Annotation{Level: Notice, Title: "perfbot: command accepted",
			Message: gateAccepted(r)})
	}
	errs = append(errs, s.setOutputs(outs...))
	return res, errors.Join(errs...)
}

// gateAccepted is the notice of an accepted run: what runs, pinned to what.
func gateAccepted(r gate.Request) string {
	msg := fmt.Sprintf("%s by %s: %s pinned to %s (%s)", r.Kind, r.Requester, strings.Join(r.Models, ","), r.SHA, r.PinnedFrom)
	if r.Kind == command.Bisect {
		return msg + fmt.Sprintf(", back to the last good commit %s: %d commits, at most %d runs", r.Base, r.Commits, r.MaxRuns)
	}
	if r.Compare {
		msg += fmt.Sprintf(", compared with %s (%s)", r.Base, r.BasePinnedFrom)
		if r.Kind == command.Bench {
			msg += fmt.Sprintf(", at most %d repeats per side", r.Repeats)
		}
	}
	return msg
}

// noServerReply answers status and cancel where no server keeps a queue: the runs are
// the workflow's, in the Actions tab.
func noServerReply(kind command.Kind, runs string) string {
	where := "the Actions tab of this repository"
	if runs != "" {
		where = "[the workflow's runs](" + runs + ")"
	}
	if kind == command.Accept {
		return "perfbot runs here as a workflow without a server, which would label the issue: a maintainer accepts a nightly regression by adding the label `" + report.AcceptedLabel + "` to its issue."
	}
	if kind == command.Cancel {
		return "perfbot runs here as a workflow without a server, so it keeps no queue to cancel from: cancel the run in " + where + "."
	}
	return "perfbot runs here as a workflow without a server: the queued and running requests are " + where + "."
}

// runsURL links the runs of the current workflow, when the runtime names it.
func (s *step) runsURL() string {
	server, ref := s.rt.Getenv("GITHUB_SERVER_URL"), s.rt.Getenv("GITHUB_WORKFLOW_REF")
	if server == "" || s.repo.Owner == "" {
		return ""
	}
	// GITHUB_WORKFLOW_REF is owner/repo/.github/workflows/file.yml@ref.
	file := ""
	if i := strings.Index(ref, "/.github/workflows/"); i >= 0 {
		file, _, _ = strings.Cut(ref[i+len("/.github/workflows/"):], "@")
	}
	u := strings.TrimRight(server, "/") + "/" + s.repo.String() + "/actions"
	if file != "" && !strings.ContainsAny(file, "/()[] ") {
		u += "/workflows/" + file
	}
	return u
}
