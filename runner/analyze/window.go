package analyze

import (
	"errors"
	"fmt"
	"sort"

	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/rocprof"
)

// Window is the decode window on the clock the trace's timestamps agree with.
type Window struct {
	Clock  string // "boottime" or "monotonic"
	Lo, Hi int64  // decode_start, measured_end on that clock
}

// ErrNoPhaseMarks says the trace cannot be placed against the bench's phase marks.
var ErrNoPhaseMarks = errors.New("no dispatch falls between warmup_start and measured_end on either clock: the phase marks are missing or do not match the trace (was MLXCEL_BENCH_PHASE_MARKS=1 set for the profiled run?)")

// PickWindow chooses the clock per docs/analysis.md §2: for boottime then monotonic, count
// the dispatches with warmup_start <= start <= measured_end; the clock with more wins,
// boottime on a tie.
func PickWindow(ds []rocprof.Dispatch, log *benchlog.Log) (Window, error) {
	best, bestN := Window{}, 0
	for _, c := range []struct {
		name  string
		marks benchlog.Marks
	}{{"boottime", log.Boottime}, {"monotonic", log.Monotonic}} {
		if !c.marks.OK {
			continue
		}
		n := countIn(ds, c.marks.WarmupStart, c.marks.MeasuredEnd)
		if n > bestN {
			best, bestN = Window{Clock: c.name, Lo: c.marks.DecodeStart, Hi: c.marks.MeasuredEnd}, n
		}
	}
	if bestN == 0 {
		if !log.Boottime.OK && !log.Monotonic.OK {
			return Window{}, errors.New("the bench log has no complete set of phase marks on either clock (was MLXCEL_BENCH_PHASE_MARKS=1 set for the profiled run?)")
		}
		return Window{}, ErrNoPhaseMarks
	}
	if best.Hi < best.Lo {
		return Window{}, fmt.Errorf("phase marks out of order on the %s clock: decode_start %d is after measured_end %d", best.Clock, best.Lo, best.Hi)
	}
	return best, nil
}

// countIn counts dispatches with lo <= start <= hi; ds is sorted by start.
func countIn(ds []rocprof.Dispatch, lo, hi int64) int {
	i, j := lowerBound(ds, lo), upperBound(ds, hi)
	if j < i {
		return 0
	}
	return j - i
}

// lowerBound is the first index with Start >= t.
func lowerBound(ds []rocprof.Dispatch, t int64) int {
	return sort.Search(len(ds), func(i int) bool { return ds[i].Start >= t })
}

// upperBound is the first index with Start > t.
func upperBound(ds []rocprof.Dispatch, t int64) int {
	return sort.Search(len(ds), func(i int) bool { return ds[i].Start > t })
}
