package portdiff

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

// Run is one profile: its summary and its decode kernels.
type Run struct {
	Summary *results.Summary
	Kernels []results.KernelRow
	Path    string // the summary's path, for messages
}

const (
	summarySuffix = "_summary.json"
	kernelsSuffix = "_decode_kernels.csv"
)

// ReadRun reads `<run>_summary.json` at path and the `<run>_decode_kernels.csv`
// beside it.
func ReadRun(path string) (Run, error) {
	if !strings.HasSuffix(path, summarySuffix) {
		return Run{}, fmt.Errorf("%s: give a <run>_summary.json (its <run>_decode_kernels.csv is read from beside it)", safetext.Quote(path))
	}
	s, err := results.ReadSummary(path)
	if err != nil {
		return Run{}, fmt.Errorf("reading summary: %w", err)
	}
	kp := strings.TrimSuffix(path, summarySuffix) + kernelsSuffix
	ks, err := results.ReadKernelsFile(kp)
	if err != nil {
		return Run{}, fmt.Errorf("reading the decode kernels of %s: %w", safetext.Quote(path), err)
	}
	return Run{Summary: s, Kernels: ks, Path: path}, nil
}

// Pairs matches the runs of two results folders by run name (in name order); runs
// only one folder holds are returned in onlyA and onlyB.
func Pairs(dirA, dirB string) (pairs [][2]Run, onlyA, onlyB []string, err error) {
	a, err := readDir(dirA)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := readDir(dirB)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(a)) {
		if rb, ok := b[name]; ok {
			pairs = append(pairs, [2]Run{a[name], rb})
		} else {
			onlyA = append(onlyA, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[name]; !ok {
			onlyB = append(onlyB, name)
		}
	}
	if len(pairs) == 0 {
		return nil, onlyA, onlyB, fmt.Errorf("no run is in both %s and %s: compare the summaries themselves (perfbot diff A_summary.json B_summary.json)", safetext.Quote(dirA), safetext.Quote(dirB))
	}
	return pairs, onlyA, onlyB, nil
}

func readDir(dir string) (map[string]Run, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("reading results folder: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", safetext.Quote(dir))
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*"+summarySuffix))
	if err != nil {
		return nil, fmt.Errorf("listing summaries: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *_summary.json in %s: point diff at a results folder (benchmarks/rocm_profiles/<gfx>_<commit>)", safetext.Quote(dir))
	}
	slices.Sort(paths)
	out := map[string]Run{}
	for _, p := range paths {
		r, err := ReadRun(p)
		if err != nil {
			return nil, err
		}
		if prev, dup := out[r.Summary.Name]; dup {
			return nil, fmt.Errorf("%s and %s both hold run %s: keep one summary per run", safetext.Quote(prev.Path), safetext.Quote(p), safetext.Quote(r.Summary.Name))
		}
		out[r.Summary.Name] = r
	}
	return out, nil
}

// Change is a figure in A and in B; Delta is B - A.
type Change struct {
	A     float64 `json:"a"`
	B     float64 `json:"b"`
	Delta float64 `json:"delta"`
}

func change(a, b float64, decimals int) Change {
	return Change{A: results.Round(a, decimals), B: results.Round(b, decimals), Delta: results.Round(b-a, decimals)}
}

// Pct is the change in percent of A (0 when A is 0).
func (c Change) Pct() float64 {
	if c.A == 0 {
		return 0
	}
	return 100 * c.Delta / c.A
}

// Diff is the comparison of two profiles.
type Diff struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Rules string `json:"rules"`
	// Per decode token.
	WallMsPerToken     Change       `json:"wall_ms_per_token"`
	GPUMsPerToken      Change       `json:"gpu_ms_per_token"`
	HostGapMsPerToken  Change       `json:"host_gap_ms_per_token"`
	DispatchesPerToken Change       `json:"dispatches_per_token"`
	DecodeTokS         Change       `json:"profiled_decode_tok_s"`
	Units              []UnitDiff   `json:"units"`
	Kernels            []KernelDiff `json:"kernels"` // in both, by the size of the change
	Appeared           []KernelDiff `json:"appeared,omitempty"`
	Vanished           []KernelDiff `json:"vanished,omitempty"`
	Notes              []string     `json:"notes,omitempty"`
}

// UnitDiff is one port unit's figures over all of its roles, per decode token.
type UnitDiff struct {
	ID                 string `json:"unit"`
	Port               string `json:"port"`
	GPUMsPerToken      Change `json:"gpu_ms_per_token"`
	HostGapMsPerToken  Change `json:"host_gap_ms_per_token"`
	DispatchesPerToken Change `json:"dispatches_per_token"`
	// PredictedMsPerToken is what A's ranking said the port could recover in A (the
	// reached roles' kernel time times their recoverable fraction, plus their host
	// gap); RecoveredMsPerToken is what B recovered: the unit's kernel time and host
	// gap in A minus in B (negative when they grew).
	PredictedMsPerToken float64 `json:"predicted_ms_per_token"`
	RecoveredMsPerToken float64 `json:"recovered_ms_per_token"`
}

// KernelDiff is one kernel name's time and calls per decode token.
type KernelDiff struct {
	Kernel        string   `json:"kernel"`
	Class         string   `json:"class"`
	Units         []string `json:"port_units,omitempty"`
	MsPerToken    Change   `json:"ms_per_token"`
	CallsPerToken Change   `json:"calls_per_token"`
}

// Compare diffs b against a with rules (nil: the shipped default).
func Compare(a, b Run, rules *attrib.Rules) (*Diff, error) {
	if rules == nil {
		rules = attrib.Default()
	}
	if a.Summary == nil || b.Summary == nil {
		return nil, errors.New("a run without a summary")
	}
	fa, err := factsOf(a.Summary)
	if err != nil {
		return nil, err
	}
	fb, err := factsOf(b.Summary)
	if err != nil {
		return nil, err
	}
	sa, sb := a.Summary, b.Summary
	d := &Diff{A: sa.Name, B: sb.Name, Rules: rules.Name()}
	if sa.Name != sb.Name {
		d.Notes = append(d.Notes, fmt.Sprintf("the runs differ (%s against %s): the figures are per token, but the model or sampling may differ too", safetext.Quote(sa.Name), safetext.Quote(sb.Name)))
	}
	d.WallMsPerToken = change(fa.wallMs, fb.wallMs, 4)
	d.GPUMsPerToken = change(float64(sa.GPUMsPerToken), float64(sb.GPUMsPerToken), 4)
	d.HostGapMsPerToken = change(float64(sa.HostGapMsPerToken), float64(sb.HostGapMsPerToken), 4)
	d.DispatchesPerToken = change(float64(sa.DispatchesPerToken), float64(sb.DispatchesPerToken), 1)
	d.DecodeTokS = change(float64(sa.ProfiledDecodeTokS), float64(sb.ProfiledDecodeTokS), 2)
	if !fa.hasGap || !fb.hasGap {
		d.Notes = append(d.Notes, "a summary carries no per-role host gap (written by the target repo's own analyzer): the units' host gap and the recovered time count kernel time alone")
	}

	rk, err := rank.Rank([]*results.Summary{sa}, rules)
	if err != nil {
		return nil, fmt.Errorf("ranking A: %w", err)
	}
	predicted := map[string]float64{}
	for _, u := range rk.Units {
		if len(u.Runs) > 0 {
			predicted[u.ID] = u.Runs[0].RecoverableMsPerToken
		}
	}
	for _, u := range rules.Units() {
		var ka, kb, ga, gb, da, db float64
		for _, role := range u.Roles {
			ka += fa.kernelMs[role]
			kb += fb.kernelMs[role]
			ga += fa.gapMs[role]
			gb += fb.gapMs[role]
			da += fa.disp[role]
			db += fb.disp[role]
		}
		if !fa.hasGap || !fb.hasGap {
			ga, gb = 0, 0
		}
		d.Units = append(d.Units, UnitDiff{
			ID: u.ID, Port: u.Port,
			GPUMsPerToken:       change(ka, kb, 4),
			HostGapMsPerToken:   change(ga, gb, 4),
			DispatchesPerToken:  change(da, db, 1),
			PredictedMsPerToken: predicted[u.ID],
			RecoveredMsPerToken: results.Round((ka+ga)-(kb+gb), 4),
		})
	}
	d.kernels(a, b)
	return d, nil
}

// kernels diffs the kernel rows by name: per-token time and calls.
func (d *Diff) kernels(a, b Run) {
	ta, tb := float64(a.Summary.GeneratedTokens), float64(b.Summary.GeneratedTokens)
	rowsB := map[string]results.KernelRow{}
	for _, r := range b.Kernels {
		rowsB[r.Kernel] = r
	}
	inA := map[string]bool{}
	for _, ra := range a.Kernels {
		inA[ra.Kernel] = true
		rb, ok := rowsB[ra.Kernel]
		kd := KernelDiff{Kernel: ra.Kernel, Class: ra.Class, Units: ra.Units}
		msA, cA := float64(ra.TotalNs)/1e6/ta, float64(ra.Calls)/ta
		if !ok {
			kd.MsPerToken, kd.CallsPerToken = change(msA, 0, 4), change(cA, 0, 2)
			d.Vanished = append(d.Vanished, kd)
			continue
		}
		kd.Units = union(ra.Units, rb.Units)
		kd.MsPerToken = change(msA, float64(rb.TotalNs)/1e6/tb, 4)
		kd.CallsPerToken = change(cA, float64(rb.Calls)/tb, 2)
		d.Kernels = append(d.Kernels, kd)
	}
	for _, rb := range b.Kernels {
		if !inA[rb.Kernel] {
			d.Appeared = append(d.Appeared, KernelDiff{Kernel: rb.Kernel, Class: rb.Class, Units: rb.Units,
				MsPerToken: change(0, float64(rb.TotalNs)/1e6/tb, 4), CallsPerToken: change(0, float64(rb.Calls)/tb, 2)})
		}
	}
	bySize := func(x, y KernelDiff) int {
		if c := cmp.Compare(math.Abs(y.MsPerToken.Delta), math.Abs(x.MsPerToken.Delta)); c != 0 {
			return c
		}
		return cmp.Compare(x.Kernel, y.Kernel)
	}
	slices.SortStableFunc(d.Kernels, bySize)
	slices.SortStableFunc(d.Appeared, bySize)
	slices.SortStableFunc(d.Vanished, bySize)
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// facts are one summary's per-token figures per role, read as the ranking reads them.
type facts struct {
	wallMs   float64
	kernelMs map[string]float64
	gapMs    map[string]float64
	disp     map[string]float64
	hasGap   bool
}

func factsOf(s *results.Summary) (facts, error) {
	f := facts{kernelMs: map[string]float64{}, gapMs: map[string]float64{}, disp: map[string]float64{}, hasGap: len(s.RoleHostGapMsPerToken) > 0}
	if s.GeneratedTokens <= 0 || s.DecodeWallMs <= 0 {
		return f, fmt.Errorf("%s: the summary has no generated_tokens or decode_wall_ms to make per-token figures from", safetext.Quote(s.Name))
	}
	tokens := float64(s.GeneratedTokens)
	f.wallMs = float64(s.DecodeWallMs) / tokens
	for _, kv := range s.RoleSharePct {
		f.kernelMs[kv.Key] = float64(kv.Value) / 100 * float64(s.DecodeGPUSumMs) / tokens
	}
	for _, kv := range s.RoleGPUMsPerToken {
		f.kernelMs[kv.Key] = float64(kv.Value)
	}
	for _, kv := range s.RoleHostGapMsPerToken {
		f.gapMs[kv.Key] = float64(kv.Value)
	}
	for _, kv := range s.RoleDispatchesPerToken {
		f.disp[kv.Key] = float64(kv.Value)
	}
	return f, nil
}

// JSON is the diff as indented JSON.
func (d *Diff) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
