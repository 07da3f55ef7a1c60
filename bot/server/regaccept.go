package server

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/mdtext"
)

// regressionAPI is what `/perfbot accept` asks GitHub; ghClient has it.
type regressionAPI interface {
	IssueByNumber(ctx context.Context, r gh.Repo, number int) (gh.Issue, error)
	Login(ctx context.Context) (string, error)
	AddIssueLabels(ctx context.Context, r gh.Repo, number int, labels ...string) error
}

var _ regressionAPI = ghClient{}

// changeIssueMarker is the marker of a regression issue of one change point (the
// nightly publish writes it: the pair, the model, the change's first night).
var changeIssueMarker = regexp.MustCompile(`<!-- perfbot:regression [A-Za-z0-9._+-]+ ([A-Za-z0-9._+-]+) ([0-9]{4}-[0-9]{2}-[0-9]{2}) -->`)

// acceptRegression records a maintainer's acceptance of a nightly regression: on a
// regression issue the bot opened for one change point, it adds report.AcceptedLabel,
// which the next nightly publish reads from GitHub (it reads nothing of the server),
// marks the change accepted and closes the issue. It needs maintain or admin, as
// cancelling someone else's request does; the server keeps no record of its own.
func (cm *commands) acceptRegression(ctx context.Context, c commandAPI, ev gate.Event, req gate.Request, log *slog.Logger) error {
	if !gh.AtLeast(req.Permission, gate.MaintainPermission) {
		return c.Reply(ctx, ev, fmt.Sprintf("Accepting a regression as the new normal needs %s or %s permission (%s has %s).",
			mdtext.Code("maintain"), mdtext.Code("admin"), mdtext.Code(ev.Author), mdtext.Code(req.Permission)))
	}
	api, ok := c.(regressionAPI)
	if !ok {
		return permanent{fmt.Errorf("the GitHub client cannot read or label issues")}
	}
	notHere := "`/perfbot accept` works on a nightly regression issue perfbot opened for one change (its title starts `Nightly: decode regression of`); this is not one."
	if ev.IsPR {
		return c.Reply(ctx, ev, notHere)
	}
	is, err := api.IssueByNumber(ctx, ev.Repo, ev.Issue)
	if err != nil {
		return err
	}
	self, err := api.Login(ctx)
	if err != nil {
		return err
	}
	m := changeIssueMarker.FindStringSubmatch(is.Body)
	if m == nil || !strings.EqualFold(is.Author, self) || !strings.HasPrefix(is.Body, report.RegressionPrefix) {
		return c.Reply(ctx, ev, notHere)
	}
	if slices.Contains(is.Labels, report.AcceptedLabel) {
		return c.Reply(ctx, ev, fmt.Sprintf("This regression is already accepted (label %s).", mdtext.Code(report.AcceptedLabel)))
	}
	if err := api.AddIssueLabels(ctx, ev.Repo, ev.Issue, report.AcceptedLabel); err != nil {
		return err
	}
	log.Info("server: regression accepted", "by", ev.Author, "issue", ev.Issue)
	return c.Reply(ctx, ev, fmt.Sprintf("Accepted by %s: the level of %s from %s is the normal one now (label %s). The next nightly marks this regression accepted, judges the later nights against the new level, and closes this issue.",
		mdtext.Code(ev.Author), mdtext.Code(m[1]), m[2], mdtext.Code(report.AcceptedLabel)))
}
