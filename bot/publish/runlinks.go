package publish

import (
	"strings"

	"github.com/lablup/perfbot/bot/report"
)

// runLinksText is Options.RunLinks as lines of a check run's summary.
func runLinksText(links []report.Link) string {
	var b strings.Builder
	for _, l := range links {
		b.WriteString("\n" + report.Text(l.Text) + ": " + l.URL + "\n")
	}
	return b.String()
}
