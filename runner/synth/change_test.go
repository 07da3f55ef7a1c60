package synth

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/results"
)

const testChange = `# the port of a fused rope, with a faster attention
faster kernel_sdpav_1pass 2
removed rope_single_freqs_1d
added mlx_fused_rope_append_kernel rope 1200
`

// A planted change shows in the run as planted: the faster kernel at half its time,
// the removed one gone from the trace, the new one once per decode step, and the
// decode faster overall.
func TestPlantedChange(t *testing.T) {
	t.Parallel()
	c, err := ParseChange([]byte(testChange))
	if err != nil {
		t.Fatal(err)
	}
	gen := func(ch *Change) (*Output, []tDisp) {
		o := DefaultOptions()
		o.Tokens, o.Noise, o.Change = 16, 0, ch
		out, err := Generate(o, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, rows, _ := readTraceCSV(t, out.TraceFile)
		return out, rows
	}
	a, rowsA := gen(nil)
	b, rowsB := gen(&c)
	count := func(rows []tDisp, part string) (n int, ns int64) {
		for _, r := range rows {
			if strings.Contains(r.name, part) {
				n++
				ns += r.end - r.start
			}
		}
		return
	}
	na, sdpaA := count(rowsA, "kernel_sdpav_1pass")
	nb, sdpaB := count(rowsB, "kernel_sdpav_1pass")
	if na == 0 || na != nb || float64(sdpaB) > 0.6*float64(sdpaA) || float64(sdpaB) < 0.4*float64(sdpaA) {
		t.Errorf("sdpa: %d dispatches %d ns in A, %d dispatches %d ns in B: want the same count at half the time", na, sdpaA, nb, sdpaB)
	}
	if n, _ := count(rowsA, "rope_single_freqs_1d"); n == 0 {
		t.Error("A has no rope kernel to remove")
	}
	if n, _ := count(rowsB, "rope_single_freqs_1d"); n != 0 {
		t.Errorf("B still dispatches the removed rope kernel %d times", n)
	}
	if n, _ := count(rowsA, "mlx_fused_rope_append_kernel"); n != 0 {
		t.Error("A dispatches the added kernel")
	}
	if n, _ := count(rowsB, "mlx_fused_rope_append_kernel"); n < b.Truth.Steps {
		t.Errorf("B dispatches the added kernel %d times over %d decode steps", n, b.Truth.Steps)
	}
	if b.Truth.WallNs >= a.Truth.WallNs {
		t.Errorf("B's decode takes %d ns, A's %d: the change makes it faster", b.Truth.WallNs, a.Truth.WallNs)
	}

	// The decode factor makes the whole step faster by about that much.
	d := Change{Decode: 1.25}
	f, _ := gen(&d)
	if r := float64(a.Truth.WallNs) / float64(f.Truth.WallNs); r < 1.2 || r > 1.3 {
		t.Errorf("decode 1.25: the decode wall is %.3f times shorter", r)
	}
}

func TestParseChangeRefuses(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"faster x", "faster x 0", "faster x NaN", "removed", "added x rope 1", "decode 1000", "slower x 2", "faster x\x01 2"} {
		if _, err := ParseChange([]byte(body)); err == nil {
			t.Errorf("%q was accepted", body)
		}
	}
	if _, err := ParseChange([]byte(strings.Repeat("#", MaxChangeBytes+1))); err == nil {
		t.Error("a huge file was accepted")
	}
	for _, c := range []Change{{Faster: []FasterKernel{{"no_such_kernel", 2}}}, {Removed: []string{"no_such_kernel"}}} {
		o := DefaultOptions()
		o.Tokens, o.Change = 4, &c
		if _, err := Generate(o, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no kernel of the llama step") {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := newPlan(models["llama"], results.Greedy, 512, &Change{Removed: []string{"mlx"}}); err == nil {
		t.Error("removing every kernel was accepted")
	}
}
