package report

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/templates"
)

// files maps each kind to its template in package templates.
var files = map[Kind]string{
	Page:        "page.md.tmpl",
	PRBody:      "pr.md.tmpl",
	Epic:        "epic.md.tmpl",
	Status:      "status.md.tmpl",
	StepSummary: "step-summary.md.tmpl",
	CheckRun:    "check-run.md.tmpl",

	BaselinePage:    "baseline-page.md.tmpl",
	BaselinePR:      "baseline-pr.md.tmpl",
	Tracking:        "baseline-comment.md.tmpl",
	RegressionIssue: "regression-issue.md.tmpl",
	JobSummary:      "job-summary.md.tmpl",
}

// partials are the templates every document may call by name ({{template "port-impact" .}},
// {{template "compare-rows" .}}): a section two documents share is written once.
var partials = []string{"compare-parts.md.tmpl"}

var (
	parseOnce sync.Once
	parsed    map[Kind]*template.Template
	parseErr  error
)

func load() (map[Kind]*template.Template, error) {
	parseOnce.Do(func() {
		parsed = map[Kind]*template.Template{}
		for k, name := range files {
			src, err := templates.FS.ReadFile(name)
			if err != nil {
				parseErr = fmt.Errorf("reading template %s: %w", name, err)
				return
			}
			t, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(string(src))
			if err != nil {
				parseErr = fmt.Errorf("parsing template %s: %w", name, err)
				return
			}
			for _, pn := range partials {
				ps, err := templates.FS.ReadFile(pn)
				if err == nil {
					_, err = t.New(pn).Parse(string(ps))
				}
				if err != nil {
					parseErr = fmt.Errorf("parsing template %s: %w", pn, err)
					return
				}
			}
			parsed[k] = t
		}
	})
	return parsed, parseErr
}

// Render fills the template of kind with data, which must be the kind's data type
// (PageData for Page, ...), by value or by pointer.
func Render(kind Kind, data any) (string, error) {
	ts, err := load()
	if err != nil {
		return "", err
	}
	t, ok := ts[kind]
	if !ok {
		return "", fmt.Errorf("rendering: unknown document kind %q", kind)
	}
	if err := checkData(kind, data); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering the %s: %w", kind, err)
	}
	return tidy(b.String()), nil
}

func checkData(kind Kind, data any) error {
	ok := false
	switch kind {
	case Page:
		ok = isType[PageData](data)
	case PRBody:
		ok = isType[PRData](data)
	case Epic:
		ok = isType[EpicData](data)
	case Status:
		ok = isType[StatusData](data)
	case StepSummary, CheckRun:
		ok = isType[SummaryData](data)
	case BaselinePage:
		ok = isType[BaselinePageData](data)
	case BaselinePR:
		ok = isType[BaselinePRData](data)
	case Tracking:
		ok = isType[TrackingData](data)
	case RegressionIssue:
		ok = isType[RegressionData](data)
	case JobSummary:
		ok = isType[JobSummaryData](data)
	case CompareComment, CompareCheck:
		ok = isType[CompareData](data)
	case BisectComment:
		ok = isType[BisectData](data)
	}
	if !ok {
		return fmt.Errorf("rendering the %s: data of type %T does not fit this document", kind, data)
	}
	return nil
}

func isType[T any](v any) bool {
	switch p := v.(type) {
	case T:
		return true
	case *T:
		return p != nil
	}
	return false
}

// tidy drops trailing spaces and collapses blank-line runs that template control
// lines leave behind, outside fenced code blocks (whose text is kept as it is), and
// ends the document with one newline.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	blank := 0
	for _, l := range lines {
		if fence != "" {
			out = append(out, l)
			if strings.HasPrefix(strings.TrimSpace(l), fence) && strings.Trim(strings.TrimSpace(l), "`~") == "" {
				fence = ""
			}
			continue
		}
		l = strings.TrimRight(l, " \t")
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:len(t)-len(strings.TrimLeft(t, string(t[0])))]
		}
		if l == "" {
			blank++
			if blank > 1 || len(out) == 0 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}

var funcs = template.FuncMap{
	"num":         num,
	"fixed":       fixed,
	"dec":         dec,
	"text":        Text,
	"code":        Code,
	"cellcode":    CellCode,
	"fenced":      Fenced,
	"link":        mdLink,
	"links":       mdLinks,
	"unitshare":   unitShare,
	"sampling":    (*results.Summary).SamplingTag,
	"slowdown":    slowdown,
	"inc":         func(i int) int { return i + 1 },
	"join":        strings.Join,
	"textjoin":    textJoin,
	"issues":      issueList,
	"comment":     hiddenJSON,
	"linkurl":     LinkURL,
	"historyjson": historyJSON,
	// The nightly baseline's documents.
	"nightsjson":     nightsJSON,
	"regressionjson": regressionJSON,
	"checksjson":     checksJSON,
	"names":          names,
	"dash":           orDash,
	"tok":            func(v float64) string { return fmt.Sprintf("%.2f", v) },
}

// num prints a summary number as the summary file does (Python's repr of a float).
func num(v any) string {
	switch n := v.(type) {
	case results.Num:
		return results.PyFloat(float64(n))
	case *results.Num:
		if n == nil {
			return "—"
		}
		return results.PyFloat(float64(*n))
	case float64:
		return results.PyFloat(n)
	case int:
		return fmt.Sprint(n)
	}
	return fmt.Sprint(v)
}

// dec prints a summary number with a fixed number of decimals, so that a table column
// holds one precision; a missing number is "—".
func dec(decimals int, v any) string {
	switch n := v.(type) {
	case results.Num:
		return fixed(decimals, float64(n))
	case *results.Num:
		if n == nil {
			return "—"
		}
		return fixed(decimals, float64(*n))
	case float64:
		return fixed(decimals, n)
	case *float64:
		if n == nil {
			return "—"
		}
		return fixed(decimals, *n)
	case int:
		return fixed(decimals, float64(n))
	}
	return fmt.Sprint(v)
}

// fixed prints a figure the ranking rounded with a fixed number of decimals.
func fixed(decimals int, v float64) string {
	return fmt.Sprintf("%.*f", decimals, v)
}

func mdLink(l Link) string {
	return "[" + Text(l.Text) + "](" + LinkURL(l.URL) + ")"
}

func mdLinks(ls []Link) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = mdLink(l)
	}
	return strings.Join(out, ", ")
}

func textJoin(items []string, sep string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = Text(s)
	}
	return strings.Join(out, sep)
}

// issueList writes unit ids as issue references ("#2067, #2065"), which GitHub links.
func issueList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "#" + Text(id)
	}
	return strings.Join(out, ", ")
}

// unitShare is a unit's reached share in a run with the fallback share in brackets.
func unitShare(s *results.Summary, id string) string {
	u, ok := s.PortUnits.Get(id)
	if !ok {
		return "—"
	}
	return fixed(2, float64(u.ReachedDefaultSharePct)) + " (" + fixed(2, float64(u.FallbackSharePct)) + ")"
}

// slowdown says how to read the profiler's slowdown: a negative one is noise between a
// single plain and a single profiled run, not a speed-up.
func slowdown(s *results.Summary) string {
	switch {
	case s.ProfilerDecodeSlowdownPct == nil:
		return "no plain run"
	case *s.ProfilerDecodeSlowdownPct < 0:
		return "negative: run-to-run noise between one plain and one profiled run, not a speed-up"
	default:
		return "profiled run slower by this much"
	}
}

// hiddenJSON puts a JSON document in an HTML comment. encoding/json escapes < and >,
// so the text cannot close the comment early.
func hiddenJSON(label, js string) string {
	return "<!-- " + label + " " + js + " -->"
}
