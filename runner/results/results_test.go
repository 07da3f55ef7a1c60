package results

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

func fixtureRuns(t testing.TB) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab"), "*_summary.json"))
	if err != nil || len(m) != 2 {
		t.Fatalf("fixture summaries: %v %v", m, err)
	}
	return m
}

// The repo analyzer's files must survive a read and a write byte for byte: that is what
// "same key names, units and rounding" means in practice.
func TestSummaryRoundTripsFixturesByteForByte(t *testing.T) {
	t.Parallel()
	for _, path := range fixtureRuns(t) {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ReadSummary(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.MarshalIndent()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimRight(got, "\n"), bytes.TrimRight(want, "\n")) {
			t.Errorf("%s: re-encoded summary differs:\n%s", filepath.Base(path), firstDiff(got, want))
		}
	}
}

func TestKernelsRoundTripsFixturesByteForByte(t *testing.T) {
	t.Parallel()
	m, _ := filepath.Glob(filepath.Join(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab"), "*_decode_kernels.csv"))
	if len(m) != 2 {
		t.Fatalf("want 2 fixture decode_kernels files, got %d", len(m))
	}
	for _, path := range m {
		want, _ := os.ReadFile(path)
		rows, err := ReadKernelsFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteKernels(&b, rows); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s: re-encoded CSV differs:\n%s", filepath.Base(path), firstDiff(b.Bytes(), want))
		}
		for _, r := range rows {
			if got := AvgNs(r.TotalNs, r.Calls); got != r.AvgNs {
				t.Errorf("AvgNs(%d, %d) = %d, file says %d", r.TotalNs, r.Calls, got, r.AvgNs)
			}
			if got := Round(float64(r.Calls)/128, 2); got != r.CallsPerToken {
				t.Errorf("calls_per_token of %d calls = %v, file says %v", r.Calls, got, r.CallsPerToken)
			}
		}
	}
}

func TestAvgNsTiesToEven(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ total, calls, want int64 }{
		{5, 2, 2}, {7, 2, 4}, {10, 4, 2}, {14, 4, 4}, {10, 3, 3}, {11, 3, 4}, {0, 0, 0},
	} {
		if got := AvgNs(c.total, c.calls); got != c.want {
			t.Errorf("AvgNs(%d,%d) = %d, want %d", c.total, c.calls, got, c.want)
		}
	}
}

func TestPyFloatAndRound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		x    float64
		want string
	}{{1, "1.0"}, {63.5, "63.5"}, {0, "0.0"}, {-6.79, "-6.79"}, {1e-5, "1e-05"}, {159.74, "159.74"}} {
		if got := PyFloat(c.x); got != c.want {
			t.Errorf("PyFloat(%v) = %q, want %q", c.x, got, c.want)
		}
	}
	if got := Round(2.675, 2); got != 2.67 { // binary 2.67499999...
		t.Errorf("Round(2.675, 2) = %v, want 2.67 as Python", got)
	}
	if got := Round(-0.001, 2); PyFloat(got) != "0.0" {
		t.Errorf("Round(-0.001, 2) printed %q, want 0.0", PyFloat(got))
	}
}

func TestSamplingTags(t *testing.T) {
	t.Parallel()
	for _, tag := range []string{"greedy", "t0.7", "t0.7-p0.95", "t1"} {
		s, err := ParseSampling(tag)
		if err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		if s.Tag() != tag {
			t.Errorf("ParseSampling(%q).Tag() = %q", tag, s.Tag())
		}
	}
	for _, bad := range []string{"", "t", "p0.9", "t0.7-p1.5", "t0-p0.9", "t0.7;rm"} {
		if _, err := ParseSampling(bad); err == nil {
			t.Errorf("ParseSampling(%q) accepted", bad)
		}
	}
	if got := RunName("models/mlx/Qwen3-30B-A3B-4bit/", Sampling{0.7, 0.95}); got != "Qwen3-30B-A3B-4bit_t0.7-p0.95" {
		t.Errorf("RunName = %q", got)
	}
	if got := FolderName("gfx1151", "929c80ab0123"); got != "gfx1151_929c80ab" {
		t.Errorf("FolderName = %q", got)
	}
}

func firstDiff(got, want []byte) string {
	n := min(len(got), len(want))
	i := 0
	for i < n && got[i] == want[i] {
		i++
	}
	lo := max(0, i-80)
	return "got:  ..." + string(got[lo:min(len(got), i+80)]) + "\nwant: ..." + string(want[lo:min(len(want), i+80)])
}
