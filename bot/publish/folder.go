package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

// Names of the session files the runner writes beside the runs.
const (
	guardLog   = "guard.log"
	guardJSONL = "guard.log.jsonl"
	hostInfo   = "hostinfo.json"
	sessionDoc = "session.json"
	gemmTests  = "gemm_tests.json"
)

// committedSuffixes are the per-run files that go into the commit (FORMATS.md §3);
// committedNames are the per-session ones. Anything else stays out, traces above all.
var (
	committedSuffixes = []string{"_kernel_stats.csv", "_decode_kernels.csv", "_summary.json", "_bench.log"}
	committedNames    = []string{guardLog, guardJSONL, hostInfo, sessionDoc, gemmTests}
)

var folderRE = regexp.MustCompile(`^([A-Za-z0-9]+)_([0-9a-f]{7,40})$`)

// folder is one profile's results folder as read from disk.
type folder struct {
	dir     string // the <gfx>_<commit8> folder
	name    string
	gfx     string
	commit8 string

	runs    []*results.Summary
	files   []string // names to commit, sorted
	skipped []string // names left out, sorted

	guard    []guard.Event
	hasGuard bool
	env      []report.Row
	hasHost  bool
	session  session
	gemm     *patch.Outcome
	notes    []string // problems that do not stop publishing
}

// session is what publish needs from the runner's session.json. The file is read
// leniently: a key that is missing or of another shape is left empty.
type session struct {
	Commit   string
	Date     string // YYYY-MM-DD
	When     time.Time
	Models   []string
	Sampling []string
	Runs     []report.RunState
}

// findFolder accepts the results root holding one <gfx>_<commit> folder, or that
// folder itself.
func findFolder(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("reading the results folder: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder: give the results folder written by `perfbot run profile`", dir)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*_summary.json")); len(m) > 0 {
		return dir, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("reading the results folder: %w", err)
	}
	var found []string
	for _, e := range entries {
		if !e.IsDir() || !folderRE.MatchString(e.Name()) {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*_summary.json")); len(m) > 0 {
			found = append(found, e.Name())
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no run summaries in %s: want <gfx>_<commit>/<run>_summary.json as written by `perfbot run profile` (did every run fail?)", dir)
	case 1:
		return filepath.Join(dir, found[0]), nil
	}
	return "", fmt.Errorf("%s holds %d results folders (%s): give the one to publish", dir, len(found), strings.Join(found, ", "))
}

// readFolder reads everything publish needs from a results folder.
func readFolder(dir string) (*folder, error) {
	dir, err := findFolder(dir)
	if err != nil {
		return nil, err
	}
	f := &folder{dir: dir, name: filepath.Base(dir)}
	m := folderRE.FindStringSubmatch(f.name)
	if m == nil {
		return nil, fmt.Errorf("results folder %q is not named <gfx>_<commit> (e.g. gfx1151_929c80ab): publish the folder `perfbot run profile` wrote", f.name)
	}
	f.gfx, f.commit8 = m[1], m[2]

	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the results folder: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && committable(name) {
			f.files = append(f.files, name)
		} else {
			f.skipped = append(f.skipped, name)
		}
	}
	sort.Strings(f.files)
	sort.Strings(f.skipped)

	if err := f.readSession(); err != nil {
		return nil, err
	}
	if err := f.readSummaries(); err != nil {
		return nil, err
	}
	if err := f.readGuard(); err != nil {
		return nil, err
	}
	if err := f.readHost(); err != nil {
		return nil, err
	}
	if err := f.readGemm(); err != nil {
		return nil, err
	}
	return f, nil
}

func committable(name string) bool {
	if slices.Contains(committedNames, name) {
		return true
	}
	for _, s := range committedSuffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return true
		}
	}
	return false
}

// readSummaries reads the runs in the session's order (then by name).
func (f *folder) readSummaries() error {
	paths, err := filepath.Glob(filepath.Join(f.dir, "*_summary.json"))
	if err != nil {
		return fmt.Errorf("listing summaries: %w", err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		s, err := results.ReadSummary(p)
		if err != nil {
			return fmt.Errorf("reading summary: %w", err)
		}
		if s.Name == "" {
			return fmt.Errorf("%s has no run name: is it a <run>_summary.json?", p)
		}
		if want := strings.TrimSuffix(filepath.Base(p), "_summary.json"); s.Name != want {
			return fmt.Errorf("%s names run %q: the file and the run must have the same name", p, s.Name)
		}
		f.runs = append(f.runs, s)
	}
	order := map[string]int{}
	for i, r := range f.session.Runs {
		order[r.Name] = i + 1
	}
	sort.SliceStable(f.runs, func(i, j int) bool {
		oi, oj := order[f.runs[i].Name], order[f.runs[j].Name]
		if oi != oj && oi > 0 && oj > 0 {
			return oi < oj
		}
		return oi > 0 && oj == 0
	})
	return nil
}

func (f *folder) readGuard() error {
	b, err := os.ReadFile(filepath.Join(f.dir, guardLog))
	if errors.Is(err, fs.ErrNotExist) {
		f.notes = append(f.notes, "the results folder has no guard.log: the runs' guard evidence is missing")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the guard log: %w", err)
	}
	evs, err := guard.ParseLog(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Join(f.dir, guardLog), err)
	}
	f.guard, f.hasGuard = evs, true
	return nil
}

func (f *folder) readGemm() error {
	b, err := os.ReadFile(filepath.Join(f.dir, gemmTests))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the numeric test outcomes: %w", err)
	}
	o, err := patch.ParseOutcome(b)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(f.dir, gemmTests), err)
	}
	f.gemm = &o
	return nil
}

func (f *folder) readSession() error {
	b, err := os.ReadFile(filepath.Join(f.dir, sessionDoc))
	if errors.Is(err, fs.ErrNotExist) {
		f.notes = append(f.notes, "the results folder has no session.json: the date and commit come from elsewhere")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the session manifest: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("%s: want a JSON object: %w", filepath.Join(f.dir, sessionDoc), err)
	}
	s := &f.session
	s.Commit = str(raw, "commit", "mlxcel_commit", "sha")
	for _, k := range []string{"finished", "finished_at", "end", "date", "started", "started_at", "start"} {
		if t, ok := timeOf(raw, k); ok {
			s.When = t
			break
		}
	}
	s.Date = str(raw, "date")
	if len(s.Date) > 10 {
		s.Date = s.Date[:10]
	}
	if _, err := time.Parse(time.DateOnly, s.Date); err != nil {
		s.Date = ""
		if !s.When.IsZero() {
			s.Date = s.When.Format(time.DateOnly)
		}
	}
	s.Models = names(raw["models"], "name", "model")
	s.Sampling = names(raw["sampling"], "tag", "name")
	var runs []map[string]json.RawMessage
	if json.Unmarshal(raw["runs"], &runs) == nil {
		for _, r := range runs {
			s.Runs = append(s.Runs, report.RunState{
				Name:   str(r, "name", "run"),
				Status: str(r, "status", "state", "outcome"),
				Detail: str(r, "error", "detail", "reason", "message"),
			})
		}
	}
	return nil
}

// str returns the first of keys that holds a JSON string.
func str(m map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		var s string
		if json.Unmarshal(m[k], &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func timeOf(m map[string]json.RawMessage, key string) (time.Time, bool) {
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// names reads a list given as strings or as objects carrying one of keys.
func names(raw json.RawMessage, keys ...string) []string {
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		return ss
	}
	var objs []map[string]json.RawMessage
	if json.Unmarshal(raw, &objs) == nil {
		for _, o := range objs {
			if s := str(o, keys...); s != "" {
				ss = append(ss, s)
			}
		}
	}
	return ss
}

// hostLabels names the host facts the report knows, in the order it shows them; other
// keys of hostinfo.json follow under their own names.
var hostLabels = []struct{ key, label string }{
	{"gpu", "GPU"}, {"gpu_name", "GPU"}, {"marketing_name", "GPU"},
	{"gfx", "GPU target"}, {"gfx_target", "GPU target"},
	{"compute_units", "compute units"}, {"cu_count", "compute units"},
	{"vram_bytes", "GPU memory"}, {"vram_total_bytes", "GPU memory"},
	{"mem_total_bytes", "host memory"}, {"host_mem_bytes", "host memory"},
	{"rocm_version", "ROCm"}, {"hip_version", "HIP"}, {"rocprofv3_version", "rocprofv3"},
	{"rocprofiler_sdk_version", "rocprofiler-sdk"},
	{"kernel", "Linux kernel"}, {"os", "OS"}, {"cpu", "CPU"}, {"hostname", "host"},
	{"mlxcel_commit", "mlxcel commit"}, {"overlay_commit", "MLX ROCm overlay commit"},
}

func (f *folder) readHost() error {
	b, err := os.ReadFile(filepath.Join(f.dir, hostInfo))
	if errors.Is(err, fs.ErrNotExist) {
		f.notes = append(f.notes, "the results folder has no hostinfo.json: the environment table shows only what the folder name tells")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the host facts: %w", err)
	}
	// The runner writes runner/hostinfo's Info; other shapes (older runners, hand-made
	// folders) are shown key by key.
	var info hostinfo.Info
	if json.Unmarshal(b, &info) == nil && (info.ROCm.Known() || info.GPU.Known() || info.ROCm.Reason != "") {
		for _, r := range info.Table() {
			f.env = append(f.env, report.Row{Label: r.Name, Value: r.Value})
		}
		f.hasHost = true
		return nil
	}
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%s: want a JSON object: %w", filepath.Join(f.dir, hostInfo), err)
	}
	flat := map[string]string{}
	flatten("", raw, flat)
	done := map[string]bool{}
	labelled := map[string]bool{}
	for _, hl := range hostLabels {
		v, ok := flat[hl.key]
		if !ok || v == "" || labelled[hl.label] {
			continue
		}
		f.env = append(f.env, report.Row{Label: hl.label, Value: v})
		done[hl.key], labelled[hl.label] = true, true
	}
	rest := make([]string, 0, len(flat))
	for k := range flat {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		if flat[k] != "" {
			f.env = append(f.env, report.Row{Label: k, Value: flat[k]})
		}
	}
	f.hasHost = true
	return nil
}

// flatten turns nested host facts into dotted keys with printable values; byte counts
// are shown in GiB as well.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(key, val, out)
		}
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			sub := map[string]string{}
			flatten("", e, sub)
			if s, ok := sub[""]; ok {
				parts = append(parts, s)
			} else {
				b, _ := json.Marshal(e)
				parts = append(parts, string(b))
			}
		}
		out[prefix] = strings.Join(parts, ", ")
	case json.Number:
		s := x.String()
		if strings.HasSuffix(prefix, "_bytes") {
			if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
				s = fmt.Sprintf("%s GiB (%s bytes)", strconv.FormatFloat(math.Round(n/(1<<30)*10)/10, 'f', -1, 64), s)
			}
		}
		out[prefix] = s
	case string:
		out[prefix] = x
	case bool:
		out[prefix] = strconv.FormatBool(x)
	case nil:
	default:
		out[prefix] = fmt.Sprint(x)
	}
}
