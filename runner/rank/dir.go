package rank

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/results"
)

// Dir ranks every `<run>_summary.json` of a results folder (in name order) with rules,
// greedy as the headline sampling, measuring replacement kernels in the runs'
// `<run>_decode_kernels.csv`. `perfbot rank`, the analysis of the sample runs and the
// Action's profile job all rank a folder this way.
func Dir(dir string, rules *attrib.Rules) (*Ranking, error) {
	return DirWith(dir, rules, Options{})
}

// DirWith is Dir with options; Kernels nil reads the folder's.
func DirWith(dir string, rules *attrib.Rules, o Options) (*Ranking, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("reading results folder: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder: give the results folder holding the runs' <run>_summary.json", dir)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*_summary.json"))
	if err != nil {
		return nil, fmt.Errorf("listing summaries: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *_summary.json in %s: run `perfbot analyze` first, or point rank at a results folder (benchmarks/rocm_profiles/<gfx>_<commit>)", dir)
	}
	sort.Strings(paths)
	var sums []*results.Summary
	// Each summary is validated as it is read (results.ReadSummary); two of one run
	// would rank it twice, or the last one alone.
	byName := map[string]string{}
	for _, p := range paths {
		s, err := results.ReadSummary(p)
		if err != nil {
			return nil, fmt.Errorf("reading summary: %w", err)
		}
		if first, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("%s and %s both hold run %s: keep one summary per run in %s", first, p, safetext.Quote(s.Name), dir)
		}
		byName[s.Name] = p
		sums = append(sums, s)
	}
	if o.Kernels == nil {
		if o.Kernels, err = ReadKernels(dir, sums); err != nil {
			return nil, err
		}
	}
	rk, err := RankWith(sums, rules, o)
	if err != nil {
		return nil, fmt.Errorf("ranking: %w", err)
	}
	return rk, nil
}

// ReadKernels reads the `<run>_decode_kernels.csv` beside each summary in dir, by run
// name; a run without one is left out (its summary's top_kernels stand in).
func ReadKernels(dir string, sums []*results.Summary) (map[string][]results.KernelRow, error) {
	out := map[string][]results.KernelRow{}
	for _, s := range sums {
		if results.CheckRunName(s.Name) != nil {
			continue // not a file name in dir
		}
		p := filepath.Join(dir, s.Name+"_decode_kernels.csv")
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		rows, err := results.ReadKernelsFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading the decode kernels of %s: %w", safetext.Quote(s.Name), err)
		}
		out[s.Name] = rows
	}
	return out, nil
}
