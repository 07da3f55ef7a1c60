package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/internal/mdtext"
	"github.com/lablup/perfbot/internal/strs"
)

// rerunComment is the comment id a re-run request is stored under: a re-run has no
// trigger comment, and the table holds one request per (repository, comment id), so
// it takes the negated id of the check run whose Re-run button asked for it. No real
// comment has a negative id, and a second delivery of the same click finds the
// request it made.
func rerunComment(checkRunID int64) int64 { return -checkRunID }

// rerun answers a check_run delivery: the Re-run button of a perfbot check run
// (rerequested) queues the same request again, with the same pinned commit, when the
// person who pressed it may run perfbot on the repository (the gate decides, on the
// request's command as if they had posted it). Anyone else gets a reply and nothing
// is queued. Other check_run actions are not perfbot's to act on.
func (cm *commands) rerun(ctx context.Context, d inbox.Delivery) error {
	var ev github.CheckRunEvent
	if err := json.Unmarshal(d.Payload, &ev); err != nil {
		return permanent{fmt.Errorf("reading the check_run event: %w", err)}
	}
	if ev.GetAction() != "rerequested" {
		return nil
	}
	cr := ev.GetCheckRun()
	repoName := ev.GetRepo().GetFullName()
	log := cm.log.With(logkey.Delivery, d.ID, logkey.Event, d.Event, logkey.Repo, repoName, "check_run", cr.GetID())
	var id int64
	if n, ok := strings.CutPrefix(cr.GetExternalID(), "perfbot-request-"); ok {
		id, _ = strconv.ParseInt(n, 10, 64)
	}
	if id <= 0 {
		log.Debug("server: a re-run of a check run that is not a perfbot request's; ignored")
		return nil
	}
	installation := ev.GetInstallation().GetID()
	if installation <= 0 {
		return permanent{errors.New("the check_run event has no installation: not an App delivery")}
	}
	old, ok, err := cm.queue.Get(ctx, id)
	if err != nil {
		return err
	}
	if !ok || old.Repo != repoName || old.CheckRunID != cr.GetID() || old.SHA != cr.GetHeadSHA() {
		log.Info("server: a re-run of a check run that is not the one of the request it names; ignored", logkey.Request, id)
		return nil
	}
	log = log.With(logkey.Request, old.ID)
	repo, err := gh.ParseRepo(repoName)
	if err != nil {
		return permanent{err}
	}
	c, err := cm.api(installation)
	if err != nil {
		return permanent{err}
	}
	sender, senderType := ev.GetSender().GetLogin(), ev.GetSender().GetType()
	// The gate decides as if the sender had posted the request's command; the reply
	// marker is the check run's, so a delivery processed again edits its one reply.
	gev := gate.Event{
		Action: "created", Repo: repo, DefaultBranch: ev.GetRepo().GetDefaultBranch(), InstallationID: installation,
		Issue: old.Issue, IsPR: old.IsPR, CommentID: cr.GetID(), Body: old.Command,
		Author: sender, AuthorType: senderType, Sender: sender, SenderType: senderType,
	}
	if !old.State.Final() {
		return c.Reply(ctx, gev, fmt.Sprintf("Request %d has not ended yet (%s); its check run can be re-run once it has.", old.ID, old.State))
	}
	dec, err := gate.Decide(ctx, gev, c, gate.Options{BotLogin: cm.botLogin})
	if err != nil {
		return fmt.Errorf("deciding on the re-run of request %d: %w", old.ID, err)
	}
	cm.decisions.WithLabelValues(string(dec.Outcome), string(dec.Reason)).Inc()
	switch dec.Outcome {
	case gate.Ignored:
		log.Info("server: re-run ignored", "reason", dec.Reason, "detail", dec.Detail)
		return nil
	case gate.Denied:
		log.Info("server: re-run denied", "reason", dec.Reason, "sender", sender)
		return c.Reply(ctx, gev, fmt.Sprintf("%s pressed Re-run on the check run of request %d; it is not queued again. %s", mdtext.Code(sender), old.ID, dec.Reply))
	}
	if string(dec.Request.Kind) != old.Kind {
		return permanent{fmt.Errorf("request %d's command %q reads as a %q command now", old.ID, old.Command, dec.Request.Kind)}
	}
	host, ok := cm.hostOf(old.Host)
	if !ok {
		var err error
		if host, ok, err = cm.pickHost(ctx, dec.Request.Command.Backend); err != nil {
			return err
		}
		if !ok {
			return c.Reply(ctx, gev, fmt.Sprintf("This perfbot server has no GPU host for %s any more; request %d cannot run again.", mdtext.Code(dec.Request.Command.Backend), old.ID))
		}
	}
	// The same request: its command, pinned commit (and whatever else it pinned),
	// models and sampling, on a host of its backend, for the sender.
	nr := old
	nr.ID, nr.Delivery, nr.CommentID, nr.Requester = 0, d.ID, rerunComment(cr.GetID()), sender
	nr.Installation, nr.Host, nr.Workflow = installation, host.Label, host.Workflow
	if b := ev.GetRepo().GetDefaultBranch(); b != "" {
		nr.Ref = b
	}
	nr.PinnedFrom = strs.Clip(fmt.Sprintf("re-run of request %d, %s", old.ID, old.PinnedFrom), 200, "…")
	nr.State, nr.StatusCommentID, nr.CheckRunID, nr.RunID, nr.RunURL = "", 0, 0, 0, ""
	nr.Conclusion, nr.CancelBy, nr.Error, nr.Tries = "", "", "", 0
	r, _, err := cm.queue.Add(ctx, nr)
	if err != nil {
		return err
	}
	log = log.With("rerun", r.ID, logkey.Host, r.Host)
	if r.Delivery != d.ID {
		log.Info("server: this check run was re-run already", "first", r.Delivery)
		return c.Reply(ctx, gev, fmt.Sprintf("The check run of request %d was re-run already: request %d. To run it once more, press Re-run on the check run of request %d.", old.ID, r.ID, r.ID))
	}
	if r.State != queue.Accepting {
		log.Info("server: re-run already queued", "state", r.State)
		return nil
	}
	if r.StatusCommentID == 0 {
		body, err := cm.marks.queuedBody(ctx, r)
		if err != nil {
			return err
		}
		sc, _, err := c.UpsertComment(ctx, repo, r.Issue, requestMarker(r.ID), body)
		if err != nil {
			return err
		}
		if err := cm.queue.SetStatusComment(ctx, r.ID, sc.ID); err != nil {
			return err
		}
		r.StatusCommentID = sc.ID
	}
	if r.IsPR && r.CheckRunID == 0 {
		ncr, err := c.CreateCheckRun(ctx, repo, gh.CheckRunSpec{
			Name: "perfbot " + r.Kind, HeadSHA: r.SHA, ExternalID: externalID(r.ID),
			Title:   fmt.Sprintf("Queued: request %d on %s (re-run of request %d)", r.ID, r.Host, old.ID),
			Summary: fmt.Sprintf("%s, re-run by %s, runs commit %s (%s) on the GPU host %s.", mdtext.Code(r.Command), mdtext.Code(r.Requester), mdtext.Code(r.SHA), mdtext.Text(r.PinnedFrom), mdtext.Code(r.Host)),
		})
		if err != nil {
			return err
		}
		if err := cm.queue.SetCheckRun(ctx, r.ID, ncr.ID); err != nil {
			return err
		}
	}
	if err := cm.queue.MarkQueued(ctx, r.ID); err != nil {
		return err
	}
	log.Info("server: request queued again by a check run's Re-run", "sha", r.SHA, "sender", sender)
	cm.queues.kick(r.Host, false)
	return nil
}

// hostOf returns the host of a label the settings still list.
func (cm *commands) hostOf(label string) (Host, bool) {
	for _, h := range cm.hosts {
		if h.Label == label {
			return h, true
		}
	}
	return Host{}, false
}
