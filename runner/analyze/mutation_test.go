package analyze

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/rocprof"
)

// The decode window is [decode_start, measured_end], both ends included: a dispatch
// starting exactly on an edge is decode, one a nanosecond outside is not. The whole
// metrics are compared, straddlers and the idle gap included.
func TestMeasureWindowEdges(t *testing.T) {
	t.Parallel()
	d := func(start, end int64, name uint32) rocprof.Dispatch {
		return rocprof.Dispatch{Start: start, End: end, Name: name}
	}
	w := Window{Clock: "boottime", Lo: 100, Hi: 200}
	cases := []struct {
		name string
		ds   []rocprof.Dispatch
		want Metrics
	}{
		{"on both edges", []rocprof.Dispatch{d(90, 100, 1), d(100, 110, 2), d(150, 160, 3), d(200, 230, 4), d(201, 210, 5)}, Metrics{
			Window: w, First: 1, WallNs: 100, GPUSumNs: 10 + 10 + 30, GPUBusyNs: 20,
			GapNs: []int64{0, 40, 40}, TailNs: 0, IdleGapNs: 0, HasIdleGap: true, LastBefore: 1,
		}},
		{"one nanosecond inside each edge", []rocprof.Dispatch{d(99, 100, 1), d(101, 110, 2), d(199, 205, 3)}, Metrics{
			Window: w, First: 1, WallNs: 100, GPUSumNs: 9 + 6, GPUBusyNs: 10,
			GapNs: []int64{1, 89}, TailNs: 0, IdleGapNs: 1, HasIdleGap: true, LastBefore: 1,
		}},
		{"a straddler and one ending a nanosecond after lo", []rocprof.Dispatch{d(50, 60, 7), d(95, 101, 8), d(99, 130, 9), d(120, 140, 2)}, Metrics{
			Window: w, First: 2 + 1, WallNs: 100, GPUSumNs: 20, GPUBusyNs: 20,
			GapNs: []int64{20}, TailNs: 60, Straddlers: 2, IdleGapNs: 60, HasIdleGap: true, LastBefore: 7,
		}},
		{"nothing ended before lo", []rocprof.Dispatch{d(99, 101, 1), d(100, 120, 2)}, Metrics{
			Window: w, First: 1, WallNs: 100, GPUSumNs: 20, GPUBusyNs: 20,
			GapNs: []int64{0}, TailNs: 80, Straddlers: 1,
		}},
	}
	for _, c := range cases {
		got, err := Measure(c.ds, w)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		c.want.Decode = c.ds[c.want.First : c.want.First+len(c.want.GapNs)]
		if diff := cmp.Diff(&c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: metrics (-want +got):\n%s", c.name, diff)
		}
		if sum := sumGaps(got) + got.TailNs + got.GPUBusyNs; sum != got.WallNs {
			t.Errorf("%s: gaps + tail + busy = %d, wall %d", c.name, sum, got.WallNs)
		}
	}
	for _, ds := range [][]rocprof.Dispatch{
		{d(50, 99, 1), d(99, 150, 2), d(201, 300, 3)},
		{d(201, 300, 3)},
		nil,
	} {
		_, err := Measure(ds, w)
		var nd *NoDecodeError
		if !errors.As(err, &nd) || nd.Window != w || !strings.Contains(err.Error(), "on the boottime clock") {
			t.Errorf("Measure(%v) = %v, want the empty window named", ds, err)
		}
	}
}

func sumGaps(m *Metrics) int64 {
	var s int64
	for _, g := range m.GapNs {
		s += g
	}
	return s
}

// The clock is the one with more dispatches in [warmup_start, measured_end], edges
// included; boottime wins a tie.
func TestPickWindowEdges(t *testing.T) {
	t.Parallel()
	marks := func(warm, dec, end int64) benchlog.Marks {
		return benchlog.Marks{WarmupStart: warm, MeasuredStart: warm, DecodeStart: dec, MeasuredEnd: end, OK: true}
	}
	starts := func(ss ...int64) []rocprof.Dispatch {
		var ds []rocprof.Dispatch
		for _, s := range ss {
			ds = append(ds, rocprof.Dispatch{Start: s, End: s + 1})
		}
		return ds
	}
	cases := []struct {
		name string
		ds   []rocprof.Dispatch
		log  benchlog.Log
		want Window
		err  string
	}{
		{"edges count on monotonic", starts(10, 20, 1000, 2000), benchlog.Log{Boottime: marks(1000, 1500, 1999), Monotonic: marks(10, 15, 20)},
			Window{Clock: "monotonic", Lo: 15, Hi: 20}, ""},
		{"a tie goes to boottime", starts(10, 20), benchlog.Log{Boottime: marks(20, 20, 30), Monotonic: marks(0, 5, 10)},
			Window{Clock: "boottime", Lo: 20, Hi: 30}, ""},
		{"boottime with more", starts(10, 20, 30), benchlog.Log{Boottime: marks(10, 15, 30), Monotonic: marks(10, 15, 20)},
			Window{Clock: "boottime", Lo: 15, Hi: 30}, ""},
		{"only monotonic marks", starts(10), benchlog.Log{Monotonic: marks(10, 10, 10)}, Window{Clock: "monotonic", Lo: 10, Hi: 10}, ""},
		{"one nanosecond outside", starts(9, 21), benchlog.Log{Boottime: marks(10, 15, 20)}, Window{}, ErrNoPhaseMarks.Error()},
		{"no marks", starts(10), benchlog.Log{}, Window{}, "no complete set of phase marks on either clock"},
		{"decode after the end", starts(10), benchlog.Log{Boottime: marks(10, 21, 20)}, Window{},
			"phase marks out of order on the boottime clock: decode_start 21 is after measured_end 20"},
	}
	for _, c := range cases {
		got, err := PickWindow(c.ds, &c.log)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
}
