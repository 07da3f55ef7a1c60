package benchcsv

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/safetext"
)

// Backends are the runtimes the harnesses name their files after: the GPU backend of
// bench_decode.sh, and pylm for bench_mlxlm.py (the mlx-lm baseline).
var Backends = []string{"metal", "cuda", "rocm", "pylm"}

// Baseline is the backend name of the mlx-lm baseline's files.
const Baseline = "pylm"

// Name is a parsed harness file name:
// `{backend}_{hw}[_vlm]_{date}[_{suffix}][_single_{model}].csv`.
type Name struct {
	Backend string // rocm, metal, cuda or pylm
	Host    string // the hardware tag: strixhalo-gfx1151, m5max, ...
	VLM     bool
	Date    string // YYYY-MM-DD
	// Suffix is the free label of a non-default configuration (ssm-kernel-off); such
	// files are experiments, not nightly history.
	Suffix string
	// Single is the model of the harness's single-model mode (also a re-measure).
	Single string
}

var dateSeg = regexp.MustCompile(`_(\d{4}-\d{2}-\d{2})(_|\.csv$)`)

// ParseName reads a harness file name (a base name, no folder).
func ParseName(base string) (Name, error) {
	bad := func(why string) (Name, error) {
		return Name{}, fmt.Errorf("%s is not a harness CSV name ({backend}_{hw}[_vlm]_{date}[_{suffix}][_single_{model}].csv): %s", safetext.Quote(base), why)
	}
	if !strings.HasSuffix(base, ".csv") || strings.ContainsAny(base, "/\\") {
		return bad("want a .csv base name")
	}
	backend, rest, ok := strings.Cut(base, "_")
	if !ok || !isBackend(backend) {
		return bad("it does not start with one of " + strings.Join(Backends, ", "))
	}
	loc := dateSeg.FindStringSubmatchIndex(rest)
	if loc == nil {
		return bad("no _YYYY-MM-DD date")
	}
	n := Name{Backend: backend, Host: rest[:loc[0]], Date: rest[loc[2]:loc[3]]}
	if _, err := time.Parse(time.DateOnly, n.Date); err != nil {
		return bad("the date " + n.Date + " is not a calendar date")
	}
	if h, ok := strings.CutSuffix(n.Host, "_vlm"); ok {
		n.Host, n.VLM = h, true
	}
	if n.Host == "" {
		return bad("no hardware tag")
	}
	tail := strings.TrimSuffix(rest[loc[3]:], ".csv") // "" or "_suffix[_single_model]"
	if tail != "" {
		tail = tail[1:]
		if m, ok := strings.CutPrefix(tail, "single_"); ok {
			n.Single = m
		} else if i := strings.Index(tail, "_single_"); i >= 0 {
			n.Suffix, n.Single = tail[:i], tail[i+len("_single_"):]
		} else {
			n.Suffix = tail
		}
		single := strings.HasPrefix(tail, "single_") || strings.Contains(tail, "_single_")
		if tail == "" || single && n.Single == "" {
			return bad("an empty suffix or model")
		}
	}
	return n, nil
}

func isBackend(s string) bool {
	for _, b := range Backends {
		if s == b {
			return true
		}
	}
	return false
}

// String is the file name.
func (n Name) String() string {
	var b strings.Builder
	b.WriteString(n.Backend + "_" + n.Host)
	if n.VLM {
		b.WriteString("_vlm")
	}
	b.WriteString("_" + n.Date)
	if n.Suffix != "" {
		b.WriteString("_" + n.Suffix)
	}
	if n.Single != "" {
		b.WriteString("_single_" + n.Single)
	}
	return b.String() + ".csv"
}

// Nightly says the file is a full sweep of the default configuration: no suffix (an
// experiment) and not a single-model run (a sanity run or a re-measure).
func (n Name) Nightly() bool { return n.Suffix == "" && n.Single == "" }

// Pair is the (backend, host, harness) a file belongs to: files of one pair measure
// the same runtime on the same machine with the same harness.
func (n Name) Pair() string {
	p := n.Backend + "_" + n.Host
	if n.VLM {
		p += "_vlm"
	}
	return p
}

// Stem is the file name without .csv; the files that go with a CSV (guard evidence,
// the run manifest) are named after it.
func (n Name) Stem() string { return strings.TrimSuffix(n.String(), ".csv") }
