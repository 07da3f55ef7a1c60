package trend

import (
	"fmt"
	"strings"

	"github.com/lablup/perfbot/internal/mdtext"
	"github.com/lablup/perfbot/runner/baseline"
)

// GitHubPage is the trend page as a repository shows it on GitHub, which runs no
// script and shows an SVG file as an image: a Markdown page (committed as README.md,
// so GitHub shows it when the folder is opened) and one SVG file per host beside it.
type GitHubPage struct {
	Markdown []byte
	// SVGs maps a file name beside the page (<host>.svg) to its chart.
	SVGs map[string][]byte
}

// Markdown renders the GitHub form of the trend page of h: per host the SVG of every
// model (SVG) and a table of each model's last night, mlxcel and mlx-lm, linked to its
// CSV row under o.LinkBase (a relative path from the page or a URL ending in /).
func Markdown(h *baseline.History, o Options) (GitHubPage, error) {
	if o.Title == "" {
		o.Title = "Nightly decode throughput"
	}
	if o.Rules == (baseline.Rules{}) {
		o.Rules = baseline.DefaultRules()
	}
	// The HTML page's data, with links: the table's rows link where its points do.
	html := o
	html.NoLinks = false
	d, err := layout(h, html)
	if err != nil {
		return GitHubPage{}, err
	}
	if len(d.Hosts) == 0 {
		return GitHubPage{}, fmt.Errorf("the history holds no nightly CSV to chart")
	}
	g := GitHubPage{SVGs: map[string][]byte{}}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n", mdtext.Text(d.Title), mdtext.Text(d.Summary))
	for _, host := range d.Hosts {
		svg, err := SVG(h, host.Name, nil, o)
		if err != nil {
			return GitHubPage{}, err
		}
		file := anchor(host.Name) + ".svg"
		g.SVGs[file] = svg
		fmt.Fprintf(&b, "\n## %s (%s)\n\n", mdtext.Text(host.Name), mdtext.Text(host.Backend))
		fmt.Fprintf(&b, "![Nightly decode tok/s of each model on %s](%s)\n\n", mdtext.Text(host.Name), mdtext.LinkURL(file))
		b.WriteString("| model | last night | nights |\n| --- | --- | ---: |\n")
		for _, c := range host.Charts {
			nights := 0
			var last []string
			for _, s := range c.Series {
				if len(s.Points) == 0 {
					continue
				}
				nights = max(nights, len(s.Points))
				p := s.Points[len(s.Points)-1]
				cell := fmt.Sprintf("%s %.2f tok/s on %s", s.Name, p.Value, p.Date.Format("2006-01-02"))
				if p.Href != "" {
					cell = fmt.Sprintf("[%s](%s)", mdtext.Text(cell), mdtext.LinkURL(p.Href))
				} else {
					cell = mdtext.Text(cell)
				}
				last = append(last, cell)
			}
			fmt.Fprintf(&b, "| %s | %s | %d |\n", mdtext.Text(c.Model), strings.Join(last, "; "), nights)
		}
	}
	fmt.Fprintf(&b, "\nmlxcel is the solid line, mlx-lm the dashed one; a ring marks a night outside its noise band. %s\n\n%s\n",
		mdtext.Text(d.Rule), mdtext.Text(d.SegRule))
	g.Markdown = []byte(b.String())
	return g, nil
}
