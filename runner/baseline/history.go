package baseline

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lablup/perfbot/internal/mathx"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// MaxHistoryFiles bounds a history folder: years of nightly runs of a few backends.
const MaxHistoryFiles = 20000

// History is every harness file of a results folder, read.
type History struct {
	Dir   string
	Files []*benchcsv.File
	// Unread are the .csv files that are not harness files or could not be read, with
	// the reason; they are reported, never guessed at.
	Unread []string
}

// LoadDir reads every harness CSV in dir (not its subfolders). A file that cannot be read
// goes to Unread; only an unreadable folder is an error.
func LoadDir(dir string) (*History, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the history folder: %w", err)
	}
	h := &History{Dir: dir}
	n := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		if n++; n > MaxHistoryFiles {
			return nil, fmt.Errorf("the history folder %s has more than %d CSV files: give the benchmarks folder itself", dir, MaxHistoryFiles)
		}
		// A symlink could point anywhere: history is regular files of the folder only.
		if !e.Type().IsRegular() {
			h.Unread = append(h.Unread, e.Name()+": not a regular file")
			continue
		}
		f, err := benchcsv.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			h.Unread = append(h.Unread, err.Error())
			continue
		}
		h.Files = append(h.Files, f)
	}
	h.sort()
	return h, nil
}

// New makes a history of files already read.
func New(files ...*benchcsv.File) *History {
	h := &History{Files: files}
	h.sort()
	return h
}

// sort orders files by date, then name: the order runs happened in, as far as the names
// tell.
func (h *History) sort() {
	slices.SortStableFunc(h.Files, func(a, b *benchcsv.File) int {
		return cmp.Or(cmp.Compare(a.Name.Date, b.Name.Date), cmp.Compare(a.Name.String(), b.Name.String()))
	})
}

// Point is one run of one model: the rows of one file (several when the harness
// repeated the model; their median is the run's value).
type Point struct {
	File   string    `json:"file"`
	Date   string    `json:"date"`
	Commit string    `json:"commit,omitempty"`
	Lines  []int     `json:"lines"`
	Values []float64 `json:"decode_tok_s"`
	// Prefill is the median prefill tok/s of the rows that have it, 0 when none do.
	Prefill float64 `json:"prefill_tok_s,omitempty"`
	Env     Env     `json:"-"`
}

// Value is the run's decode tok/s: the median of its repeats.
func (p Point) Value() float64 { return mathx.Median(p.Values) }

// PointOf is the run of model in f: its measured rows. ok is false when the file has
// no measured row of the model.
func PointOf(f *benchcsv.File, model string) (Point, bool) {
	var p Point
	var prefill []float64
	for _, r := range f.RowsOf(model) {
		if !r.OK() {
			continue
		}
		if len(p.Values) == 0 {
			p = Point{File: f.Name.String(), Date: f.Name.Date, Commit: r.MlxcelCommit, Env: EnvOf(f.Name, r)}
		} else if EnvOf(f.Name, r) != p.Env {
			// Repeats in another environment are not repeats.
			continue
		}
		p.Lines = append(p.Lines, r.Line)
		p.Values = append(p.Values, r.DecodeTokS)
		if r.HasPrefill {
			prefill = append(prefill, r.PrefillTokS)
		}
	}
	if len(prefill) > 0 {
		p.Prefill = mathx.Median(prefill)
	}
	return p, len(p.Values) > 0
}

// Nightly returns the nightly runs of model in env, oldest first, from files dated
// before date (all of them when date is ""), leaving out the file named skip. other
// counts the model's nightly runs of the same backend and host in another environment,
// with how the first of them differed.
func (h *History) Nightly(model string, env Env, date, skip string) (runs []Point, other int, otherWhy string) {
	for _, f := range h.Files {
		n := f.Name
		if !n.Nightly() || n.Backend != env.Backend || n.Host != env.Host || n.VLM != env.VLM || n.String() == skip {
			continue
		}
		if date != "" && n.Date >= date {
			continue
		}
		p, ok := PointOf(f, model)
		if !ok {
			continue
		}
		if p.Env != env {
			if other == 0 {
				otherWhy = strings.Join(env.Diff(p.Env), ", ")
			}
			other++
			continue
		}
		runs = append(runs, p)
	}
	return runs, other, otherWhy
}

// Pairs lists every (backend, host, harness) pair the history's file names show, e.g.
// rocm_strixhalo-gfx1151, pylm_strixhalo-gfx1151, metal_m5max_vlm.
func (h *History) Pairs() []string {
	var out []string
	for _, f := range h.Files {
		if p := f.Name.Pair(); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Latest is the newest nightly file of a pair, or nil.
func (h *History) Latest(pair string) *benchcsv.File {
	var last *benchcsv.File
	for _, f := range h.Files {
		if f.Name.Nightly() && f.Name.Pair() == pair {
			last = f
		}
	}
	return last
}
