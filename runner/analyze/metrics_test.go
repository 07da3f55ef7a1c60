package analyze

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
		{"a zero-length dispatch on lo is decode, not the last one before it", []rocprof.Dispatch{d(80, 90, 1), d(100, 100, 2), d(100, 150, 3)}, Metrics{
			Window: w, First: 1, WallNs: 100, GPUSumNs: 50, GPUBusyNs: 50,
			GapNs: []int64{0, 0}, TailNs: 50, IdleGapNs: 10, HasIdleGap: true, LastBefore: 1,
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
