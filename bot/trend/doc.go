// Package trend owns the trend page of the nightly baselines (docs/nightly.md): one
// static HTML file with an inline SVG chart per model and host, decode tok/s over the
// nights for mlxcel and the mlx-lm baseline, the model's noise band shaded, every point
// a link to its CSV row. It reads the history through runner/baseline, lays the charts
// out with bot/chart and renders with html/template; the page loads nothing (no
// script, no font, no stylesheet from the network) and fits a 390 px screen. SVG writes
// the same charts as one self-contained SVG file for the baseline page; Markdown is the
// page as a repository shows it on GitHub (a Markdown file and one SVG per host).
//
// It must not run benchmarks, decide verdicts (the bands are runner/baseline's), or talk
// to GitHub.
package trend
