package report

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Markers of the nightly baseline's documents.
const (
	TrackingMarker   = "<!-- perfbot:nightly-baseline -->"
	BaselinePRMarker = "<!-- perfbot:rocm-baseline -->"
	// RegressionPrefix starts every regression issue's marker; RegressionMarker adds
	// the backend, host and model.
	RegressionPrefix = "<!-- perfbot:regression "
	// AcceptedLabel is the label `/perfbot accept` puts on a regression issue: a
	// maintainer took the new level as the normal one. The nightly publish reads it from
	// GitHub; nothing else records an acceptance.
	AcceptedLabel = "perfbot-accepted"
)

var markerUnsafe = regexp.MustCompile(`[^A-Za-z0-9._+-]`)

// RegressionMarker is the hidden marker of the one issue of a regression: the model of
// a (backend, host) pair. Characters that could end the comment are replaced.
func RegressionMarker(pair, model string) string {
	return RegressionPrefix + markerUnsafe.ReplaceAllString(pair, "_") + " " + markerUnsafe.ReplaceAllString(model, "_") + " -->"
}

// BaselineRow is one model of the baseline page's results table; figures arrive
// formatted ("35.41", "1.08x", "—").
type BaselineRow struct {
	Model         string
	Link          string // repo path of mlxcel's row (#L<line>); "" when it has none
	MlxcelPrefill string
	MlxLMPrefill  string
	MlxcelDecode  string
	MlxLMDecode   string
	Ratio         string // decode, mlxcel / mlx-lm
}

// SkippedRow is a model a runtime has no result for: its SKIP:/FAIL: token in words.
type SkippedRow struct {
	Model   string
	Runtime string // mlxcel or mlx-lm
	Token   string
	Meaning string
}

// VerdictRow is one model's verdict against the nightly history.
type VerdictRow struct {
	Model   string
	Verdict string
	Decode  string
	Band    string // "33.76 to 37.40 (10 runs)" or "—"
	Change  string // "-10.4%" against the band's median (or the last baseline)
	Text    string // the verdict's own text, generated from the same numbers
	Issue   *Link  // the regression issue, when one is open
}

// BaselinePageData fills the baseline page (docs/benchmark_results/rocm-baseline-<gfx>-<date>.md).
type BaselinePageData struct {
	GPU    string
	GFX    string
	Date   string
	Commit string
	Host   string // the hardware tag of the file names
	// CSVs are the raw rows, linked.
	CSVs        []Link
	Env         []Row
	Shape       []Row
	Commands    []string
	Rows        []BaselineRow
	MedianRatio string // "1.054x over 5 models"; "" when no model has both
	// NoRatio says why no model has a ratio ("" when one has): the side that is
	// missing, naming the CSV that is there.
	NoRatio string
	// StabilityRule says when a ratio is given; Unstable lists the sides whose repeats
	// spread wider than it, with the repeats.
	StabilityRule string
	Unstable      []string
	Skipped       []SkippedRow
	Problems      []string
	// Verdicts compare with the nightly history; Baseline is its last accepted file.
	Verdicts   []VerdictRow
	Baseline   string
	NoiseRule  string
	Superseded []string
	Remeasures []string
	// NoVerdict says why there is no verdict against the history, "" when there is one.
	NoVerdict string
	// Missing are the models of the last accepted baseline (MissingFrom, a CSV name)
	// that tonight's CSV has no row for.
	Missing     []string
	MissingFrom string
	// Changes are the change points of the nightly history (regressions, gains and
	// tonight's suspicions); Creep the models whose current segment is CreepPct or more
	// below the best segment of the last CreepDays days.
	Changes   []ChangeRow
	Creep     []string
	CreepDays int
	CreepPct  float64
	// Chart is the SVG chart committed beside the page (decode tok/s over the nights);
	// nil when there is none.
	Chart *Link
	// Trend is the trend page (the whole nightly history), nil when none is published.
	Trend      *Link
	Guard      []GuardRow
	GuardNotes []string
	Tenants    []string
	GuardLog   *Link // nil when no evidence log was given
}

// BaselinePRData fills the baseline pull request's body.
type BaselinePRData struct {
	GFX         string
	Date        string
	Commit      string
	Page        Link
	Files       []Link
	Verdicts    []VerdictRow
	MedianRatio string
	Counts      string // "1 regression, 4 no significant change"
	Problems    []string
	Tenants     []string
	// Chart is the page's SVG chart as an image URL; nil when there is none.
	Chart *Link
	// Trend is the trend page, nil when none is published.
	Trend *Link
}

// NightEntry is one night in the tracking comment's compact history.
type NightEntry struct {
	Date         string   `json:"date"`
	Commit       string   `json:"commit"`
	Measured     int      `json:"measured"`
	MedianRatio  string   `json:"median_ratio,omitempty"`
	Regressions  []string `json:"regressions,omitempty"`
	Improvements []string `json:"improvements,omitempty"`
	Problems     int      `json:"problems,omitempty"`
	Page         string   `json:"page,omitempty"`
	PR           string   `json:"pr,omitempty"`
}

// TrackingData fills the one tracking comment edited each night.
type TrackingData struct {
	Current NightEntry
	Page    Link
	PR      *Link
	// Trend is the trend page when one was published (committed or on the Pages
	// branch); nil for none.
	Trend    *Link
	Verdicts []VerdictRow
	// History holds the kept nights, newest first, tonight's included.
	History []NightEntry
}

// RegressionNight is one night of a regression while it persists.
type RegressionNight struct {
	Date      string  `json:"date"`
	Decode    float64 `json:"decode"`
	Remeasure float64 `json:"remeasure,omitempty"`
	Median    float64 `json:"median"`
	Verdict   string  `json:"verdict"`
	Page      string  `json:"page,omitempty"`
}

// RegressionData fills a regression issue.
type RegressionData struct {
	Marker    string
	Model     string
	Host      string
	GFX       string
	Date      string // tonight
	FirstSeen string
	// Persisting is false on the night the model is back inside its band.
	Persisting bool
	Latest     VerdictRow
	Page       Link
	Row        Link              // the CSV row of tonight's reading
	Nights     []RegressionNight // newest first
	// Change is the change point of the issue (one issue per change); nil for the
	// per-model issue of the noise band.
	Change *RegressionChange
}

// RegressionChange is one regression found by the change-point analysis of a model's
// nightly history; figures arrive formatted.
type RegressionChange struct {
	Since     string // the first night at the new level
	From, To  string // the levels either side, tok/s
	ChangePct string // "-15.0%"
	Nights    string // the nights it may have started on
	LastGood  string
	FirstBad  string
	Found     string // how it was found
	// Checks are how the change was confirmed (the interleaved A/B of the last good
	// against the first bad commit, or a single re-run) and bisected; the issue keeps
	// them hidden so that the later nights, which hold neither, say them again.
	Checks    RegressionChecks
	State     string // open, closed, accepted
	StateText string
	Latest    string // tonight against the current segment
}

// RegressionChecks say how a change was confirmed and what its bisection found, in
// words; "" when not known.
type RegressionChecks struct {
	Confirmation string `json:"confirmation,omitempty"`
	Bisection    string `json:"bisection,omitempty"`
}

// ParseRegressionChecks reads the checks kept in an earlier regression issue; none
// when the body has none, an error when they are damaged.
func ParseRegressionChecks(body string) (RegressionChecks, error) {
	var c RegressionChecks
	m := checksRE.FindStringSubmatch(body)
	if m == nil {
		return c, nil
	}
	if err := json.Unmarshal([]byte(m[1]), &c); err != nil {
		return RegressionChecks{}, fmt.Errorf("reading the checks kept in the regression issue: %w", err)
	}
	return c, nil
}

func checksJSON(c RegressionChecks) (string, error) { return hiddenList(checksLabel, c) }

// HistoryKeep is how many nights the tracking comment and a regression issue keep.
const HistoryKeep = 14

const (
	nightsLabel     = "perfbot:nightly-history"
	regressionLabel = "perfbot:regression-history"
	checksLabel     = "perfbot:regression-checks"
)

var (
	nightsRE     = regexp.MustCompile(`<!-- ` + regexp.QuoteMeta(nightsLabel) + ` (.*?) -->`)
	regressionRE = regexp.MustCompile(`<!-- ` + regexp.QuoteMeta(regressionLabel) + ` (.*?) -->`)
	checksRE     = regexp.MustCompile(`<!-- ` + regexp.QuoteMeta(checksLabel) + ` (.*?) -->`)
)

// hiddenList encodes a history for a hidden comment; encoding/json escapes <, > and &,
// so no `-->` can appear inside.
func hiddenList(label string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding the %s: %w", label, err)
	}
	return "<!-- " + label + " " + string(b) + " -->", nil
}

// ParseNights reads the nights kept in an earlier tracking comment, newest first; none
// when the body has no history, an error when it is damaged.
func ParseNights(body string) ([]NightEntry, error) {
	m := nightsRE.FindStringSubmatch(body)
	if m == nil {
		return nil, nil
	}
	var h []NightEntry
	if err := json.Unmarshal([]byte(m[1]), &h); err != nil {
		return nil, fmt.Errorf("reading the nights kept in the tracking comment: %w", err)
	}
	return h, nil
}

// MergeNights puts cur in front of the earlier nights, replacing a rerun of the same
// date, and keeps HistoryKeep.
func MergeNights(earlier []NightEntry, cur NightEntry) []NightEntry {
	out := []NightEntry{cur}
	for _, e := range earlier {
		if e.Date != cur.Date && len(out) < HistoryKeep {
			out = append(out, e)
		}
	}
	return out
}

// ParseRegressionNights reads the nights kept in an earlier regression issue.
func ParseRegressionNights(body string) ([]RegressionNight, error) {
	m := regressionRE.FindStringSubmatch(body)
	if m == nil {
		return nil, nil
	}
	var h []RegressionNight
	if err := json.Unmarshal([]byte(m[1]), &h); err != nil {
		return nil, fmt.Errorf("reading the nights kept in the regression issue: %w", err)
	}
	return h, nil
}

// MergeRegressionNights puts cur in front, replacing a rerun of the same date, and
// keeps HistoryKeep; the first night seen is the oldest kept.
func MergeRegressionNights(earlier []RegressionNight, cur RegressionNight) []RegressionNight {
	out := []RegressionNight{cur}
	for _, e := range earlier {
		if e.Date != cur.Date && len(out) < HistoryKeep {
			out = append(out, e)
		}
	}
	return out
}

func nightsJSON(h []NightEntry) (string, error)          { return hiddenList(nightsLabel, h) }
func regressionJSON(h []RegressionNight) (string, error) { return hiddenList(regressionLabel, h) }

// names joins model names for a table cell, "—" for none.
func names(ns []string) string {
	if len(ns) == 0 {
		return "—"
	}
	return textJoin(ns, ", ")
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}

// ChangeRow is one change point of a model's nightly history on the baseline page.
type ChangeRow struct {
	Model   string
	Date    string // the first night at the new level
	Change  string // "-15.0% (30.10 to 25.59 tok/s)"
	Nights  string // the nights it may have started on: "2026-10-25" or "2026-10-24 to 2026-10-25"
	Commits string // last good..first bad
	State   string // open, closed, accepted, improvement, suspected ...
	Text    string
	Issue   *Link
}
