package rocprof

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/lablup/perfbot/internal/infile"
)

// KernelStat is one row of kernel_stats.csv (or of any *_stats.csv: domain_stats,
// memory_copy_stats, hip_api_stats share the header).
type KernelStat struct {
	Name                  string
	Calls, TotalNs        int64
	AverageNs, Percentage float64
	MinNs, MaxNs          int64
	StdDev                float64
}

// statsColumns is the header every rocprofv3 version writes for its stats files.
var statsColumns = []string{"Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage", "MinNs", "MaxNs", "StdDev"}

// ReadKernelStats reads a *_stats.csv in file order (rocprofv3 sorts by total time,
// descending). A missing file means no records: nil, nil.
func ReadKernelStats(path string) ([]KernelStat, error) {
	data, err := infile.ReadFile(path, maxTableBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading kernel stats: %w", err)
	}
	return ParseKernelStats(data, path)
}

// ParseKernelStats parses the text of a *_stats.csv; file is the name errors show.
func ParseKernelStats(data []byte, file string) ([]KernelStat, error) {
	t, err := parseTable(data, file)
	if err != nil {
		return nil, err
	}
	c, err := t.require(statsColumns...)
	if err != nil {
		return nil, err
	}
	out := make([]KernelStat, len(t.rows))
	for r := range t.rows {
		s := &out[r]
		s.Name = t.cellText(r, c[0])
		ints := []struct {
			dst *int64
			col int
		}{{&s.Calls, c[1]}, {&s.TotalNs, c[2]}, {&s.MinNs, c[5]}, {&s.MaxNs, c[6]}}
		for _, f := range ints {
			if *f.dst, err = t.cellInt(r, f.col); err != nil {
				return nil, err
			}
		}
		floats := []struct {
			dst *float64
			col int
		}{{&s.AverageNs, c[3]}, {&s.Percentage, c[4]}, {&s.StdDev, c[7]}}
		for _, f := range floats {
			if *f.dst, err = t.cellFloat(r, f.col); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
