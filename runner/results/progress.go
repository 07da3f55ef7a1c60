package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// Progress is the progress file of a running GPU job (docs/server.md, "Live
// status"): `<PERFBOT_PROGRESS_DIR>/<request-id>.json`, written atomically by the job
// at most once a minute and read by `perfbot serve` to show the request's progress in
// its status comment. The job runs the pinned commit's code on the same host, so the
// server treats the file as hostile: bounded, validated, its text clipped.
type Progress struct {
	RequestID string    `json:"request_id"`
	Phase     string    `json:"phase"`   // build, profile, bench, done
	Done      int       `json:"done"`    // models (profile runs, or bench models; a bench compare: runs) finished
	Planned   int       `json:"planned"` // models (a bench compare: runs) planned; 0 while not known
	Model     string    `json:"model"`   // the model being run now; "" between models
	ETASecs   int64     `json:"eta_secs"`
	WrittenAt time.Time `json:"written_at"`
	// Verdicts are a bench compare's current verdicts, one line per model measured so
	// far ("llama: decode tok/s faster, prefill tok/s no significant change"), at most
	// ProgressVerdictsMax; absent for other jobs.
	Verdicts []string `json:"verdicts,omitempty"`
}

// The phases of a progress file.
const (
	PhaseBuild   = "build"
	PhaseProfile = "profile"
	PhaseBench   = "bench"
	PhaseDone    = "done"
)

// ProgressMax bounds a progress file: it holds a few short fields.
const ProgressMax = 4096

// ProgressEvery is the least time between two writes of a progress file, and between
// two reads of one by the server.
const ProgressEvery = time.Minute

// progressModelMax bounds the model name kept from a progress file.
const progressModelMax = 120

// ProgressVerdictsMax bounds the verdict lines of a progress file, and
// progressVerdictMax the bytes kept of each.
const (
	ProgressVerdictsMax = 8
	progressVerdictMax  = 160
)

// RequestIDRE is what a request id looks like (the Action's request-id input): it
// names the progress file, so it holds no path separator and does not start with a
// dot.
var RequestIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ProgressPath is the progress file of a request in dir.
func ProgressPath(dir, requestID string) (string, error) {
	if !RequestIDRE.MatchString(requestID) {
		return "", fmt.Errorf("request id %s: want up to 64 letters, digits, '.', '_' or '-'", safetext.Quote(requestID))
	}
	if dir == "" {
		return "", errors.New("no progress folder")
	}
	return filepath.Join(dir, requestID+".json"), nil
}

// Validate checks a progress record as read from a file.
func (p Progress) Validate() error {
	var errs []error
	if !RequestIDRE.MatchString(p.RequestID) {
		errs = append(errs, fmt.Errorf("request_id %s is not a request id", safetext.Quote(p.RequestID)))
	}
	switch p.Phase {
	case PhaseBuild, PhaseProfile, PhaseBench, PhaseDone:
	default:
		errs = append(errs, fmt.Errorf("phase %s: want build, profile, bench or done", safetext.Quote(p.Phase)))
	}
	if p.Done < 0 || p.Planned < 0 || p.Planned > 10000 || (p.Planned > 0 && p.Done > p.Planned) {
		errs = append(errs, fmt.Errorf("done %d of planned %d: want 0 <= done <= planned <= 10000", p.Done, p.Planned))
	}
	if p.ETASecs < -1 || p.ETASecs > 30*24*3600 {
		errs = append(errs, fmt.Errorf("eta_secs %d: want -1 (unknown) to 30 days", p.ETASecs))
	}
	if len(p.Verdicts) > ProgressVerdictsMax {
		errs = append(errs, fmt.Errorf("%d verdict lines: want at most %d", len(p.Verdicts), ProgressVerdictsMax))
	}
	if p.WrittenAt.IsZero() {
		errs = append(errs, errors.New("written_at is missing"))
	}
	return errors.Join(errs...)
}

// ETA is the time left the file names, or -1 when it is not known.
func (p Progress) ETA() time.Duration {
	if p.ETASecs < 0 {
		return -1
	}
	return time.Duration(p.ETASecs) * time.Second
}

// WriteProgress writes p to its file in dir atomically (a temp file renamed over it),
// readable by others (the server runs as another user).
func WriteProgress(dir string, p Progress) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("writing the progress file: %w", err)
	}
	path, err := ProgressPath(dir, p.RequestID)
	if err != nil {
		return err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// ReadProgress reads the progress file of requestID in dir: a regular file (not a
// symlink), at most ProgressMax bytes, strict JSON of the fields above that validate,
// naming the same request. The model name and the verdict lines are cleaned (control
// characters and invalid UTF-8 replaced) and clipped; empty verdict lines are dropped.
func ReadProgress(dir, requestID string) (Progress, error) {
	path, err := ProgressPath(dir, requestID)
	if err != nil {
		return Progress{}, err
	}
	lfi, err := os.Lstat(path)
	if err != nil {
		return Progress{}, err
	}
	if !lfi.Mode().IsRegular() {
		return Progress{}, fmt.Errorf("%s is %s, not a regular file", path, infile.Kind(lfi.Mode()))
	}
	f, err := infile.Open(path)
	if err != nil {
		return Progress{}, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !os.SameFile(lfi, fi) {
		return Progress{}, fmt.Errorf("%s changed while it was opened", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, ProgressMax+1))
	if err != nil {
		return Progress{}, err
	}
	if len(data) > ProgressMax {
		return Progress{}, fmt.Errorf("%s has more than %d bytes", path, ProgressMax)
	}
	var p Progress
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Progress{}, fmt.Errorf("%s: %s", path, safetext.Clean(err.Error()))
	}
	if err := p.Validate(); err != nil {
		return Progress{}, fmt.Errorf("%s: %w", path, err)
	}
	if p.RequestID != requestID {
		return Progress{}, fmt.Errorf("%s names request %s, not %s", path, safetext.Quote(p.RequestID), requestID)
	}
	p.Model = cleanText(p.Model, progressModelMax)
	var vs []string
	for _, v := range p.Verdicts {
		if v = cleanText(v, progressVerdictMax); v != "" {
			vs = append(vs, v)
		}
	}
	p.Verdicts = vs
	return p, nil
}

// cleanText keeps a model name or a verdict line printable and short: invalid UTF-8
// and control characters become U+FFFD, and it is cut to limit bytes.
func cleanText(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return '\uFFFD'
		}
		return r
	}, s)
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.TrimSpace(s)
}
