package publish

import (
	"strings"

	"github.com/lablup/perfbot/bot/report"
)

// The texts of Options.RunLinks that the documents look for: the workflow run's page
// and its traces artifact's.
const (
	RunLinkText    = "workflow run"
	TracesLinkText = "traces artifact"
)

// runLinkOf is the first of links with the text, or nil.
func runLinkOf(links []report.Link, text string) *report.Link {
	for _, l := range links {
		if l.Text == text && l.URL != "" {
			return &l
		}
	}
	return nil
}

// runLinksText is Options.RunLinks as lines of a check run's summary.
func runLinksText(links []report.Link) string {
	var b strings.Builder
	for _, l := range links {
		b.WriteString("\n" + report.Text(l.Text) + ": " + l.URL + "\n")
	}
	return b.String()
}
