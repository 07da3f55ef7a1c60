package analyze

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/rocprof"
)

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
