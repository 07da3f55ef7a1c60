package benchcsv

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/internal/strs"
)

// MemoryBudget is the share of memory the harnesses allow a model's weights before they
// skip it (SKIP:oom_estimate): 85%, in both scripts.
const MemoryBudget = 0.85

// Expect is what the host and the checkout say a fresh file of this run must carry.
// Empty or zero fields are not checked.
type Expect struct {
	Backend string // "rocm": the backend the host runs
	GFX     string // gfx1151
	ROCm    string // 10.0.0
	HIP     string // the short HIP version, as the hip_version column holds it
	Overlay string // the overlay commit of the checkout's UPSTREAM (full or short)
	Commit  string // the checkout's commit (full or short)
	Date    string // the run's date, YYYY-MM-DD
	// DeviceMemBytes is what the GPU can allocate (96 GiB on the UMA host); HostMemBytes
	// what the host sees (31 GiB there).
	DeviceMemBytes int64
	HostMemBytes   int64
	// ModelBytes are the weights per model name (the model directory's base name).
	ModelBytes map[string]int64
}

// Severity of a problem.
type Severity string

// Severities: an Error makes the run's result unusable as it stands (the harness is
// wrong), a Warning needs a look, a Note reports a row's own result (a skip or a
// failure of one model).
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Note    Severity = "note"
)

// Problem is one finding of Check.
type Problem struct {
	Severity Severity `json:"severity"`
	Kind     string   `json:"kind"` // header, name, mislabelled, hardware, overlay, hip, commit, date, row, status, harness_memory
	File     string   `json:"file"`
	Model    string   `json:"model,omitempty"`
	Line     int      `json:"line,omitempty"`
	Text     string   `json:"text"`
}

func (p Problem) String() string {
	where := p.File
	if p.Line > 0 {
		where += ":" + strconv.Itoa(p.Line)
	}
	return fmt.Sprintf("%s: %s: %s", p.Severity, where, p.Text)
}

// Errors returns the problems of severity Error.
func Errors(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if p.Severity == Error {
			out = append(out, p)
		}
	}
	return out
}

// StatusText says in words what a result token means.
func StatusText(token string) string {
	switch {
	case token == SkipOOMEstimate:
		return "skipped before launch: the weights are over the harness's memory budget"
	case token == SkipOOM:
		return "ran out of memory at load or run time"
	case token == FailBench:
		return "the bench exited with a failure"
	case token == FailNoOutput:
		return "the bench printed no decode numbers"
	case token == "SKIP:vlm_image_not_found":
		return "skipped: the VLM test image is missing"
	case strings.HasPrefix(token, "SKIP:duplicate_of="):
		return "skipped: the same checkpoint as " + strings.TrimPrefix(token, "SKIP:duplicate_of=")
	case token == "SKIP:not_a_checkpoint":
		return "skipped: the folder is not a checkpoint"
	case token == "SKIP:missing_weights":
		return "skipped: the weights are missing"
	case token == "FAIL:timeout":
		return "the run timed out"
	case strings.HasPrefix(token, "FAIL:"):
		return "failed (" + strings.TrimPrefix(token, "FAIL:") + ")"
	case strings.HasPrefix(token, "SKIP:"):
		return "skipped (" + strings.TrimPrefix(token, "SKIP:") + ")"
	}
	return token
}

// GiB prints bytes in GiB with one decimal.
func GiB(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
}

// Check applies the checks of a nightly run on a ROCm host to a freshly written file
// (docs/nightly.md): mlxcel's file and the mlx-lm baseline's are told apart by name and
// header.
func Check(f *File, e Expect) []Problem {
	c := &checker{f: f, e: e, base: baseName(f)}
	c.name()
	c.header()
	c.rows()
	return c.out
}

type checker struct {
	f    *File
	e    Expect
	base string
	out  []Problem
}

func baseName(f *File) string {
	if f.Path != "" {
		return filepath.Base(f.Path)
	}
	return f.Name.String()
}

func (c *checker) add(sev Severity, kind, model string, line int, format string, a ...any) {
	c.out = append(c.out, Problem{Severity: sev, Kind: kind, File: c.base, Model: model, Line: line, Text: fmt.Sprintf(format, a...)})
}

func (c *checker) name() {
	n, e := c.f.Name, c.e
	if c.f.IsBaseline() {
		if n.Backend != Baseline {
			c.add(Error, "name", "", 0, "the mlx-lm baseline's file must be named pylm_<hw>_<date>.csv, not %s", c.base)
		}
		if e.GFX != "" && !strings.Contains(n.Host, e.GFX) {
			c.add(Error, "mislabelled", "", 0, "%s was written on a ROCm host (%s) but its hardware tag %s does not name the GPU: scripts/bench_mlxlm.py did not recognize the ROCm host; update it (its ROCm detection) and run again",
				c.base, e.GFX, safetext.Quote(n.Host))
		}
	} else if e.Backend != "" && n.Backend != e.Backend {
		want := Name{Backend: e.Backend, Host: hostTag(n.Host, e.GFX), Date: n.Date, Suffix: n.Suffix, Single: n.Single, VLM: n.VLM}
		c.add(Error, "mislabelled", "", 0, "%s is mislabelled: it was written on a %s host (%s) but named %s_...; the harness did not detect the %s backend (scripts/bench_decode.sh's backend detection); fix the harness and run again, the file should be %s",
			c.base, strings.ToUpper(e.Backend), orUnknown(e.GFX), n.Backend, e.Backend, want)
	} else if e.GFX != "" && !strings.Contains(n.Host, e.GFX) {
		c.add(Error, "mislabelled", "", 0, "%s: the hardware tag %s does not name the GPU target %s (want e.g. %s)", c.base, safetext.Quote(n.Host), e.GFX, hostTag(n.Host, e.GFX))
	}
	if e.Date != "" && n.Date != e.Date {
		c.add(Warning, "date", "", 0, "%s is dated %s, the run %s", c.base, n.Date, e.Date)
	}
	if n.VLM {
		c.add(Warning, "name", "", 0, "%s is a VLM sweep; the nightly baseline is the text suite", c.base)
	}
}

// HostTag is the hardware tag the harnesses give a ROCm host in file names:
// strixhalo-gfx1151 for the Strix Halo's gfx1151, amd-<gfx> for any other target.
func HostTag(gfx string) string {
	if gfx == "gfx1151" {
		return "strixhalo-gfx1151"
	}
	return "amd-" + gfx
}

func hostTag(have, gfx string) string {
	if gfx == "" {
		return have
	}
	return HostTag(gfx)
}

func orUnknown(s string) string {
	if s == "" {
		return "GPU target unknown"
	}
	return s
}

func (c *checker) header() {
	want := ROCmHeader
	what := "a ROCm run of scripts/bench_decode.sh"
	switch {
	case c.f.IsBaseline():
		want, what = BaselineHeader, "scripts/bench_mlxlm.py"
	case c.e.Backend != "rocm" && c.f.Name.Backend != "rocm":
		return // other backends' schemas are not this host's business
	}
	if slices.Equal(c.f.Header, want) {
		return
	}
	var missing, extra []string
	for _, h := range want {
		if !slices.Contains(c.f.Header, h) {
			missing = append(missing, h)
		}
	}
	for _, h := range c.f.Header {
		if !slices.Contains(want, h) {
			extra = append(extra, h)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "unexpected "+strings.Join(extra, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "the columns are in another order")
	}
	c.add(Error, "header", "", 1, "the header is not the one %s writes (docs/formats.md §6): %s", what, strings.Join(parts, "; "))
}

func (c *checker) rows() {
	f, e := c.f, c.e
	if len(f.Rows) == 0 {
		c.add(Error, "row", "", 0, "%s has a header but no rows: the harness measured nothing", c.base)
		return
	}
	rocm := !f.IsBaseline() && (f.Name.Backend == "rocm" || e.Backend == "rocm")
	hardware := ""
	for _, r := range f.Rows {
		switch {
		case r.Hardware == "":
			c.add(Error, "hardware", r.Model, r.Line, "the hardware column is empty")
		case hardware == "":
			hardware = r.Hardware
			if e.GFX != "" && !strings.Contains(r.Hardware, e.GFX) {
				c.add(Error, "hardware", r.Model, r.Line, "the hardware column %s does not name the GPU target %s: the harness described another device (the CPU?)", safetext.Quote(r.Hardware), e.GFX)
			}
			if rocm && e.ROCm != "" && !strings.Contains(r.Hardware, "ROCm"+e.ROCm) {
				c.add(Warning, "hardware", r.Model, r.Line, "the hardware column %s does not name ROCm %s", safetext.Quote(r.Hardware), e.ROCm)
			}
		case r.Hardware != hardware:
			c.add(Error, "hardware", r.Model, r.Line, "the hardware column %s differs from the first row's %s", safetext.Quote(r.Hardware), safetext.Quote(hardware))
		}
		if e.Date != "" && r.Date != "" && r.Date != e.Date {
			c.add(Warning, "date", r.Model, r.Line, "the row is dated %s, the run %s", safetext.Quote(r.Date), e.Date)
		}
		if rocm {
			c.provenance(r)
		}
		c.result(r)
	}
}

// provenance checks the ROCm-only columns and the commit against the checkout.
func (c *checker) provenance(r Row) {
	e := c.e
	switch {
	case r.OverlayCommit == "":
		c.add(Error, "overlay", r.Model, r.Line, "mlx_rocm_overlay_commit is empty: a ROCm row must say which overlay it ran")
	case e.Overlay != "" && !samePrefix(r.OverlayCommit, e.Overlay):
		c.add(Error, "overlay", r.Model, r.Line, "mlx_rocm_overlay_commit %s is not the checkout's overlay %s", safetext.Quote(r.OverlayCommit), strs.ShortSHA(e.Overlay))
	}
	switch {
	case r.HIPVersion == "":
		c.add(Error, "hip", r.Model, r.Line, "hip_version is empty: a ROCm row must say which HIP it ran")
	case e.HIP != "" && r.HIPVersion != e.HIP:
		c.add(Error, "hip", r.Model, r.Line, "hip_version %s is not the host's HIP %s", safetext.Quote(r.HIPVersion), e.HIP)
	}
	if commit := strings.TrimSuffix(r.MlxcelCommit, "-dirty"); e.Commit != "" && commit != "" && !samePrefix(commit, e.Commit) {
		c.add(Warning, "commit", r.Model, r.Line, "mlxcel_commit %s is not the checkout's commit %s", safetext.Quote(r.MlxcelCommit), strs.ShortSHA(e.Commit))
	}
}

func samePrefix(a, b string) bool {
	n := min(len(a), len(b))
	return n >= 7 && strings.EqualFold(a[:n], b[:n])
}

// result reports a row's own result: a skip or a failure per model, a measured row
// without numbers, and a memory skip of a model that fits.
func (c *checker) result(r Row) {
	e := c.e
	switch {
	case r.Status == "" && !r.HasDecode:
		c.add(Error, "row", r.Model, r.Line, "no decode_tok_s and no SKIP:/FAIL: token: the harness lost the result without saying why")
		return
	case r.Status == "":
		if r.DecodeTokS <= 0 {
			c.add(Error, "row", r.Model, r.Line, "decode_tok_s is %s: not a measurement", strconv.FormatFloat(r.DecodeTokS, 'f', -1, 64))
		}
		return
	case r.HasDecode:
		c.add(Warning, "row", r.Model, r.Line, "%s carries numbers: a skipped or failed row should have none", safetext.Clean(r.Status))
	}
	w := e.ModelBytes[r.Model]
	if r.Status == SkipOOMEstimate && w > 0 && e.DeviceMemBytes > 0 && float64(w) <= MemoryBudget*float64(e.DeviceMemBytes) {
		why := fmt.Sprintf("%s was skipped for memory (%s) although its %s of weights fit in the %s of device memory the host reports (85%%: %s): a harness problem, not a missing result",
			safetext.Clean(r.Model), r.Status, GiB(w), GiB(e.DeviceMemBytes), GiB(int64(MemoryBudget*float64(e.DeviceMemBytes))))
		if e.HostMemBytes > 0 && float64(w) > MemoryBudget*float64(e.HostMemBytes) {
			why += fmt.Sprintf("; they are over 85%% of the %s the host sees, so the harness budgeted against host memory instead of device memory", GiB(e.HostMemBytes))
		}
		c.add(Error, "harness_memory", r.Model, r.Line, "%s: fix the harness's memory budget (scripts/bench_decode.sh detect_memory_bytes, bench_mlxlm.py's limit)", why)
		return
	}
	text := fmt.Sprintf("%s: %s (%s)", safetext.Clean(r.Model), safetext.Clean(r.Status), safetext.Clean(StatusText(r.Status)))
	if (r.Status == SkipOOMEstimate || r.Status == SkipOOM) && w > 0 && e.DeviceMemBytes > 0 {
		text += fmt.Sprintf("; weights %s, device memory %s", GiB(w), GiB(e.DeviceMemBytes))
	}
	c.add(Note, "status", r.Model, r.Line, "%s", text)
}
