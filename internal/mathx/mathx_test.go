package mathx

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("odd count: %v", got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("even count: %v", got)
	}
	if got := Median([]float64(nil)); got != 0 {
		t.Errorf("empty: %v", got)
	}
	in := []time.Duration{3 * time.Second, time.Second, 2 * time.Second}
	if got := Median(in); got != 2*time.Second {
		t.Errorf("durations: %v", got)
	}
	if in[0] != 3*time.Second {
		t.Error("Median sorted its input in place")
	}
}
