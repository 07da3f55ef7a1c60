package analyze

import (
	"github.com/lablup/perfbot/runner/rocprof"
)

// Metrics are the exact integer figures of one decode window (docs/analysis.md §2-§3).
type Metrics struct {
	Window Window
	// Decode holds the decode dispatches (lo <= start <= hi) in start order; it aliases
	// the trace's slice.
	Decode []rocprof.Dispatch
	// First is the index of Decode[0] in the trace's dispatches.
	First int

	WallNs, GPUSumNs, GPUBusyNs int64
	// GapNs[i] is the idle time charged to Decode[i] by the frontier walk; TailNs is what
	// is left after the last dispatch. Their sum is exactly WallNs - GPUBusyNs.
	GapNs  []int64
	TailNs int64

	Straddlers int
	// IdleGapNs is the first decode start minus the end of the last dispatch (in start
	// order) that ends at or before lo; HasIdleGap is false when there is none.
	IdleGapNs  int64
	HasIdleGap bool
	LastBefore uint32 // name index of that dispatch (valid with HasIdleGap)
}

// Measure computes the decode metrics of a sorted trace for a window.
func Measure(ds []rocprof.Dispatch, w Window) (*Metrics, error) {
	first, end := lowerBound(ds, w.Lo), upperBound(ds, w.Hi)
	if end <= first {
		return nil, errNoDecode(w)
	}
	m := &Metrics{Window: w, Decode: ds[first:end], First: first, WallNs: w.Hi - w.Lo}

	// Before the cut: straddlers and the last dispatch that ended by lo.
	lastEnd := int64(-1)
	for i := 0; i < first; i++ {
		d := &ds[i]
		if d.Start < w.Lo && d.End > w.Lo {
			m.Straddlers++
		}
		if d.End <= w.Lo {
			// "the last dispatch, in start order, that ends at or before lo"
			lastEnd, m.LastBefore, m.HasIdleGap = d.End, d.Name, true
		}
	}
	if m.HasIdleGap {
		m.IdleGapNs = m.Decode[0].Start - lastEnd
	}

	// One walk gives the union, the per-dispatch gap charge and the tail, so that
	// sum(gaps) + tail + busy == wall holds exactly.
	m.GapNs = make([]int64, len(m.Decode))
	frontier := w.Lo
	for i := range m.Decode {
		d := &m.Decode[i]
		m.GPUSumNs += d.End - d.Start
		s, e := min(d.Start, w.Hi), min(d.End, w.Hi)
		if s > frontier {
			m.GapNs[i] = s - frontier
			frontier = s
		}
		if e > frontier {
			m.GPUBusyNs += e - frontier
			frontier = e
		}
	}
	m.TailNs = w.Hi - frontier
	return m, nil
}

func errNoDecode(w Window) error {
	return &NoDecodeError{Window: w}
}

// NoDecodeError says the decode window holds no dispatch.
type NoDecodeError struct{ Window Window }

func (e *NoDecodeError) Error() string {
	return "no kernel dispatch starts inside the decode window [decode_start, measured_end] on the " +
		e.Window.Clock + " clock: the trace does not cover the decode phase (profiler stopped early, or the wrong trace for this log?)"
}
