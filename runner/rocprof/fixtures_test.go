package rocprof

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFixtureKernelTraces parses every real kernel trace and checks it against the
// encoding/csv reading of the same file: row counts, every dispatch (sorted), the
// interned names, the inversions counted in file order.
func TestFixtureKernelTraces(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path   []string
		layout string
	}{
		{componentTrace, Layout7},
		{qwenTrace, Layout7},
		{rocpdHead, LayoutRocpdCSV},
	}
	for _, tc := range cases {
		t.Run(tc.path[len(tc.path)-1], func(t *testing.T) {
			t.Parallel()
			path := fixture(t, tc.path...)
			want, inversions := referenceDispatches(t, path)
			tr, err := ReadKernelTrace(path)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Rows != len(want) || len(tr.Dispatches) != len(want) {
				t.Errorf("rows %d, dispatches %d; encoding/csv counts %d", tr.Rows, len(tr.Dispatches), len(want))
			}
			if tr.Layout != tc.layout || !tr.HasGrid {
				t.Errorf("layout %q hasGrid %v, want %q true", tr.Layout, tr.HasGrid, tc.layout)
			}
			if tr.Inversions != inversions {
				t.Errorf("inversions %d, want %d", tr.Inversions, inversions)
			}
			diff(t, want, flatten(tr))
			if !slices.IsSortedFunc(tr.Dispatches, compareDispatch) {
				t.Error("dispatches not sorted by start")
			}
			seen := map[string]bool{}
			for _, n := range tr.Names {
				if seen[n] {
					t.Errorf("name interned twice: %q", n)
				}
				seen[n] = true
			}
			for _, d := range want {
				if !seen[d.Name] {
					t.Errorf("name missing from Names: %q", d.Name)
				}
			}
		})
	}
}

// TestFixtureQwenTraceOrder pins the facts the spec states about the real LLM trace.
func TestFixtureQwenTraceOrder(t *testing.T) {
	t.Parallel()
	tr, err := ReadKernelTrace(fixture(t, qwenTrace...))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Rows != 12263 || tr.Inversions != 247 {
		t.Errorf("rows %d inversions %d, want 12263 and 247 (docs/formats.md §1.2)", tr.Rows, tr.Inversions)
	}
	for i := 1; i < len(tr.Dispatches); i++ {
		a, b := tr.Dispatches[i-1], tr.Dispatches[i]
		if b.Start < a.Start || (b.Start == a.Start && b.End < a.End) {
			t.Fatalf("dispatch %d (%d..%d) after %d (%d..%d): not in (start, end) order", i, b.Start, b.End, i-1, a.Start, a.End)
		}
	}
	diff(t, []string{"Agent 2"}, tr.Agents)
}

// TestFixtureKernelStatsMatchTrace aggregates the component trace per kernel name and
// compares with the profiler's own kernel_stats of the same run.
func TestFixtureKernelStatsMatchTrace(t *testing.T) {
	t.Parallel()
	tr, err := ReadKernelTrace(fixture(t, componentTrace...))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := ReadKernelStats(fixture(t, append(slices.Clone(componentDir), "component-m8_kernel_stats.csv")...))
	if err != nil {
		t.Fatal(err)
	}
	type agg struct {
		calls, total, min, max int64
		durs                   []float64
	}
	byName := map[string]*agg{}
	for _, d := range tr.Dispatches {
		n := tr.Names[d.Name]
		a := byName[n]
		if a == nil {
			a = &agg{min: math.MaxInt64}
			byName[n] = a
		}
		dur := d.End - d.Start
		a.calls++
		a.total += dur
		a.min, a.max = min(a.min, dur), max(a.max, dur)
		a.durs = append(a.durs, float64(dur))
	}
	if len(stats) != len(byName) {
		t.Errorf("%d stats rows, %d kernel names in the trace", len(stats), len(byName))
	}
	var grand int64
	for _, a := range byName {
		grand += a.total
	}
	for _, s := range stats {
		a := byName[s.Name]
		if a == nil {
			t.Errorf("stats kernel not in trace: %.80s", s.Name)
			continue
		}
		if s.Calls != a.calls || s.TotalNs != a.total || s.MinNs != a.min || s.MaxNs != a.max {
			t.Errorf("%.60s: stats calls/total/min/max %d/%d/%d/%d, trace %d/%d/%d/%d",
				s.Name, s.Calls, s.TotalNs, s.MinNs, s.MaxNs, a.calls, a.total, a.min, a.max)
		}
		mean := float64(a.total) / float64(a.calls)
		if math.Abs(s.AverageNs-mean) > 1e-6*mean {
			t.Errorf("%.60s: AverageNs %f, trace mean %f", s.Name, s.AverageNs, mean)
		}
		if sd := sampleStdDev(a.durs); math.Abs(s.StdDev-sd) > 1e-3 {
			t.Errorf("%.60s: StdDev %f, trace sample stddev %f", s.Name, s.StdDev, sd)
		}
		if pct := 100 * float64(a.total) / float64(grand); math.Abs(s.Percentage-pct) > 0.005 {
			t.Errorf("%.60s: Percentage %v, trace share %.4f", s.Name, s.Percentage, pct)
		}
	}
}

func sampleStdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// TestFixtureStatsFiles reads every *_stats.csv in the fixtures (three ROCm 7.2 ones,
// the two ROCm 10 mlxcel ones) and checks the rows against encoding/csv.
func TestFixtureStatsFiles(t *testing.T) {
	t.Parallel()
	var paths []string
	for _, pattern := range []string{"rocprofv3/*/*_stats.csv", "mlxcel-gfx1151/rocm_profiles/*/*_kernel_stats.csv"} {
		m, err := filepath.Glob(filepath.Join(fixture(t), pattern))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) != 5 {
		t.Fatalf("found %d stats fixtures, want 5: %v", len(paths), paths)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			header, rows := csvRecords(t, path)
			stats, err := ReadKernelStats(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(stats) != len(rows) {
				t.Fatalf("%d stats, encoding/csv counts %d rows", len(stats), len(rows))
			}
			name, calls, avg, sd := column(t, header, "Name"), column(t, header, "Calls"), column(t, header, "AverageNs"), column(t, header, "StdDev")
			var pct float64
			for i, s := range stats {
				r := rows[i]
				if s.Name != r[name] || strconv.FormatInt(s.Calls, 10) != r[calls] {
					t.Errorf("row %d: %q %d, file has %q %s", i, s.Name, s.Calls, r[name], r[calls])
				}
				if !closeTo(s.AverageNs, r[avg]) || !closeTo(s.StdDev, r[sd]) {
					t.Errorf("row %d: average %v stddev %v, file has %s %s", i, s.AverageNs, s.StdDev, r[avg], r[sd])
				}
				if i > 0 && s.TotalNs > stats[i-1].TotalNs {
					t.Errorf("row %d: not sorted by total time", i)
				}
				pct += s.Percentage
			}
			if math.Abs(pct-100) > 0.05 {
				t.Errorf("percentages sum to %v, want 100 up to rounding", pct)
			}
		})
	}
}

// closeTo compares a parsed float with the text it came from, to the text's precision.
func closeTo(got float64, text string) bool {
	want, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return false
	}
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// TestFixtureAgentInfo reads both real agent_info files: a Threadripper CPU, two
// gfx1030 GPUs and the gfx1201 the traces ran on.
func TestFixtureAgentInfo(t *testing.T) {
	t.Parallel()
	for _, path := range [][]string{
		append(slices.Clone(componentDir), "component-m8_agent_info.csv"),
		append(slices.Clone(qwenDir), "aq4-p3-diagnostic_agent_info.csv"),
	} {
		p := fixture(t, path...)
		_, rows := csvRecords(t, p)
		agents, err := ReadAgentInfo(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(agents) != len(rows) {
			t.Fatalf("%d agents, encoding/csv counts %d rows", len(agents), len(rows))
		}
		var gfx1201 []Agent
		for _, a := range agents {
			if a.Type == "GPU" && a.Name == "gfx1201" {
				gfx1201 = append(gfx1201, a)
			}
		}
		want := Agent{NodeID: 2, LogicalNodeID: 2, Type: "GPU", CUCount: 64, WaveFrontSize: 32, GfxTargetVersion: 120001,
			Name: "gfx1201", VendorName: "AMD", ProductName: "AMD Radeon Graphics", ModelName: "ip discovery"}
		diff(t, []Agent{want}, gfx1201)

		// Every agent of the real trace resolves to the gfx1201.
		tr, err := ReadKernelTrace(fixture(t, qwenTrace...))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range tr.Agents {
			a, ok := AgentByID(agents, id)
			if !ok || a.Name != "gfx1201" {
				t.Errorf("AgentByID(%q) = %+v, %v; want the gfx1201", id, a, ok)
			}
		}
		lookups := []struct {
			id   string
			want string // Name, "" for not found
			node int
		}{
			{"Agent 2", "gfx1201", 2},
			{"Agent 1", "gfx1030", 1},
			{"Agent 0", "AMD Ryzen Threadripper PRO 3995WX 64-Cores", 0},
			{"agent 3", "gfx1030", 3},
			{"GPU 0", "gfx1030", 1}, // type-relative: GPUs in logical order
			{"GPU 1", "gfx1201", 2},
			{"GPU 3", "", 0},
			{"CPU 0", "AMD Ryzen Threadripper PRO 3995WX 64-Cores", 0},
			{"2", "gfx1201", 2}, // ROCm <= 6.4: KFD node id
			{"Agent 7", "", 0},
			{"Agent x", "", 0},
			{"", "", 0},
		}
		for _, l := range lookups {
			a, ok := AgentByID(agents, l.id)
			if ok != (l.want != "") || a.Name != l.want || (ok && a.NodeID != l.node) {
				t.Errorf("AgentByID(%q) = %s node %d, %v; want %q node %d", l.id, a.Name, a.NodeID, ok, l.want, l.node)
			}
		}
	}
}

// TestFixtureStderr reads the profiler's real stderr: it names two result files (and
// not the kernel trace, which it also wrote).
func TestFixtureStderr(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(fixture(t, append(slices.Clone(qwenDir), "rocprof.stderr")...))
	if err != nil {
		t.Fatal(err)
	}
	got := OpenedResultFiles(data)
	if len(got) != 2 {
		t.Fatalf("got %d paths, want 2: %q", len(got), got)
	}
	for i, suffix := range []string{"/aq4-p3-diagnostic_marker_api_trace.csv", "/aq4-p3-diagnostic_agent_info.csv"} {
		if !strings.HasPrefix(got[i], "/") || !strings.HasSuffix(got[i], suffix) || strings.ContainsAny(got[i], " \r\n") {
			t.Errorf("path %d = %q, want an absolute path ending in %s", i, got[i], suffix)
		}
	}
}

// TestFixtureFindOutputs finds the real output sets by their -o prefix.
func TestFixtureFindOutputs(t *testing.T) {
	t.Parallel()
	dir := fixture(t, componentDir...)
	out, err := FindOutputs(dir, "component-m8")
	if err != nil {
		t.Fatal(err)
	}
	want := Outputs{
		KernelTrace: filepath.Join(dir, "component-m8_kernel_trace.csv"),
		KernelStats: filepath.Join(dir, "component-m8_kernel_stats.csv"),
		AgentInfo:   filepath.Join(dir, "component-m8_agent_info.csv"),
		Other: map[string]string{
			"counter_collection": filepath.Join(dir, "component-m8_counter_collection.csv"),
			"domain_stats":       filepath.Join(dir, "component-m8_domain_stats.csv"),
			"memory_copy_stats":  filepath.Join(dir, "component-m8_memory_copy_stats.csv"),
			"memory_copy_trace":  filepath.Join(dir, "component-m8_memory_copy_trace.csv"),
		},
	}
	diff(t, want, out)

	qdir := fixture(t, qwenDir...)
	out, err = FindOutputs(qdir, "aq4-p3-diagnostic")
	if err != nil {
		t.Fatal(err)
	}
	if out.KernelTrace != filepath.Join(qdir, "aq4-p3-diagnostic_kernel_trace.csv") || out.KernelStats != "" ||
		out.Other["marker_api_trace"] == "" || len(out.Other) != 2 {
		t.Errorf("got %+v", out)
	}
}
