package action

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/report"
)

// TestNoServerReplies: without a server, status says where the queued and running
// requests are, cancel where to cancel a run (the workflow's runs when linked, the
// Actions tab otherwise), and accept which label a maintainer adds instead; each says
// only its own.
func TestNoServerReplies(t *testing.T) {
	t.Parallel()
	const runs = "https://github.example.com/lablup/mlxcel/actions/workflows/perfbot.yml"
	link := "[the workflow's runs](" + runs + ")"
	tab := "the Actions tab of this repository"
	for _, c := range []struct {
		kind      command.Kind
		runs      string
		want, not []string
	}{
		{command.Status, runs, []string{"queued and running requests are " + link}, []string{"cancel", tab, report.AcceptedLabel}},
		{command.Status, "", []string{"queued and running requests are " + tab}, []string{"cancel", "](", report.AcceptedLabel}},
		{command.Cancel, runs, []string{"no queue to cancel from", "cancel the run in " + link}, []string{"queued and running", tab, report.AcceptedLabel}},
		{command.Cancel, "", []string{"cancel the run in " + tab}, []string{"queued and running", "](", report.AcceptedLabel}},
		{command.Accept, runs, []string{"adding the label `" + report.AcceptedLabel + "`"}, []string{"cancel", "queued and running", runs}},
	} {
		got := noServerReply(c.kind, c.runs)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s, runs %q: %q does not say %q", c.kind, c.runs, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s, runs %q: %q says %q", c.kind, c.runs, got, n)
			}
		}
	}
}
