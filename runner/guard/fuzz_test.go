package guard

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
)

// renderLog writes events back as log lines, one per event.
func renderLog(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == EvSection || e.Kind == EvNote {
			b.WriteString("== " + e.Text + "\n")
			continue
		}
		b.WriteString(e.Time.Format(TimeLayout) + " " + e.Text + "\n")
	}
	return b.String()
}

// FuzzParseLog: the guard log parser never panics, yields at most one event per line,
// and a log it accepts reads back the same after it is written out again.
func FuzzParseLog(f *testing.F) {
	real, err := os.ReadFile(testfix.Path(f, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", "guard.log"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	lines := bytes.SplitAfter(real, []byte("\n"))
	for i := 0; i+20 <= len(lines); i += 97 {
		f.Add(bytes.Join(lines[i:i+20], nil))
	}
	f.Add([]byte("2026-09-30T17:41:01+0900 sample 5: CONTENDED foreign_gpu=[2682448:mlxcel-bench-de] compilers=[12:cc1] cpu=[7:python3:97%]\n" +
		"2026-09-30T17:41:01+0900 attempt 1: INTERRUPTED, exit 143\n2026-09-30T17:41:01+0900 caught SIGTERM: stopping command and monitor\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := ParseLog(bytes.NewReader(b))
		if n := bytes.Count(b, []byte("\n")) + 1; len(evs) > n {
			t.Fatalf("%d events from %d lines", len(evs), n)
		}
		if err != nil {
			return
		}
		again, err := ParseLog(strings.NewReader(renderLog(evs)))
		if err != nil {
			t.Fatalf("the log written back is refused: %v", err)
		}
		if len(again) != len(evs) {
			t.Fatalf("%d events read back as %d", len(evs), len(again))
		}
		for i := range evs {
			a, c := evs[i], again[i]
			if !a.Time.Equal(c.Time) || a.Time.Format(TimeLayout) != c.Time.Format(TimeLayout) {
				t.Fatalf("event %d: time %v read back as %v", i, a.Time, c.Time)
			}
			a.Line, c.Line, a.Time, c.Time = 0, 0, time.Time{}, time.Time{}
			if !reflect.DeepEqual(a, c) {
				t.Fatalf("event %d: %+v read back as %+v", i, a, c)
			}
		}
	})
}
