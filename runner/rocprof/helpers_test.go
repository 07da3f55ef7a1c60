package rocprof

import (
	"encoding/csv"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/testfix"
)

// Real data paths, relative to testdata/real.
var (
	componentDir   = []string{"rocprofv3", "gfx1201-sllm-component-rocm7.2.1"}
	qwenDir        = []string{"rocprofv3", "gfx1201-sllm-qwen3.5-9b-rocm7.2.1"}
	componentTrace = append(slices.Clone(componentDir), "component-m8_kernel_trace.csv")
	qwenTrace      = append(slices.Clone(qwenDir), "aq4-p3-diagnostic_kernel_trace.csv")
	rocpdHead      = []string{"rocprofv3", "mi300a-rocpd2csv-out_kernel_trace-head.csv"}
	llamaKernels   = []string{"mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", "Meta-Llama-3.1-8B-Instruct-4bit_greedy_decode_kernels.csv"}
)

// csvRecords reads a file with encoding/csv in lazy-quote mode: the independent
// reference the tests check the hand-written scanner against.
func csvRecords(t testing.TB, path string) (header []string, rows [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("encoding/csv on %s: %v", path, err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: no header", path)
	}
	return recs[0], recs[1:]
}

// column returns the index of a header cell, case-insensitively.
func column(t testing.TB, header []string, name string) int {
	t.Helper()
	for i, h := range header {
		if strings.EqualFold(h, name) {
			return i
		}
	}
	return -1
}

// flatDispatch is a dispatch with its texts resolved, for comparing traces whose
// intern tables are numbered differently.
type flatDispatch struct {
	Start, End, Grid int64
	Name, Agent      string
}

func flatten(tr *Trace) []flatDispatch {
	out := make([]flatDispatch, len(tr.Dispatches))
	for i, d := range tr.Dispatches {
		out[i] = flatDispatch{d.Start, d.End, d.Grid, tr.Names[d.Name], tr.Agents[d.Agent]}
	}
	return out
}

// referenceDispatches builds the expected, sorted dispatches of a trace file with
// encoding/csv, plus its row count and inversions in file order.
func referenceDispatches(t testing.TB, path string) (want []flatDispatch, inversions int) {
	t.Helper()
	header, rows := csvRecords(t, path)
	name, start, end, agent := column(t, header, "Kernel_Name"), column(t, header, "Start_Timestamp"), column(t, header, "End_Timestamp"), column(t, header, "Agent_Id")
	gx, gy, gz := column(t, header, "Grid_Size_X"), column(t, header, "Grid_Size_Y"), column(t, header, "Grid_Size_Z")
	atoi := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return v
	}
	for i, r := range rows {
		grid := max(atoi(r[gx]), 1) * max(atoi(r[gy]), 1) * max(atoi(r[gz]), 1)
		d := flatDispatch{atoi(r[start]), atoi(r[end]), grid, r[name], r[agent]}
		if i > 0 && d.Start < want[i-1].Start {
			inversions++
		}
		want = append(want, d)
	}
	slices.SortStableFunc(want, func(a, b flatDispatch) int {
		return compareDispatch(Dispatch{Start: a.Start, End: a.End}, Dispatch{Start: b.Start, End: b.End})
	})
	return want, inversions
}

// layoutSpec is how to write a trace in one profiler version's layout.
type layoutSpec struct {
	header     []string
	agentAsInt bool // ROCm <= 6.4 writes the KFD node id, unquoted
}

var (
	header62 = []string{"Kind", "Agent_Id", "Queue_Id", "Kernel_Id", "Kernel_Name", "Correlation_Id",
		"Start_Timestamp", "End_Timestamp", "Private_Segment_Size", "Group_Segment_Size",
		"Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"}
	header64 = []string{"Kind", "Agent_Id", "Queue_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name",
		"Correlation_Id", "Start_Timestamp", "End_Timestamp", "Private_Segment_Size", "Group_Segment_Size",
		"Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"}
	header7 = []string{"Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id",
		"Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size", "Scratch_Size",
		"VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y",
		"Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"}
	headerRocpd = []string{"Guid", "Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
		"Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp", "Lds_Block_Size",
		"Scratch_Size", "Vgpr_Count", "Accum_Vgpr_Count", "Sgpr_Count", "Workgroup_Size_X", "Workgroup_Size_Y",
		"Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"}
	headerLegacy = []string{"Index", "KernelName", "gpu-id", "queue-id", "pid", "tid", "DispatchNs", "BeginNs", "EndNs", "CompleteNs"}
)

// stringCols are the text columns rocprofv3 quotes.
var stringCols = map[string]bool{"kind": true, "agent_id": true, "kernel_name": true, "kernelname": true, "guid": true}

// renderTrace writes dispatches as a trace file in the given layout, the way
// rocprofv3 does: quoted header, quoted strings without doubled quotes, bare numbers.
// Columns the dispatch does not carry get plausible constants.
func renderTrace(spec layoutSpec, ds []flatDispatch, eol string) string {
	var b strings.Builder
	for i, h := range spec.header {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + h + `"`)
	}
	b.WriteString(eol)
	for i, d := range ds {
		for c, h := range spec.header {
			if c > 0 {
				b.WriteByte(',')
			}
			var v string
			switch strings.ToLower(h) {
			case "kind":
				v = "KERNEL_DISPATCH"
			case "guid":
				v = "00006409-00d1-70d1-a5cb-b5ab88214544"
			case "agent_id", "gpu-id":
				v = d.Agent
				if spec.agentAsInt {
					v = strings.TrimPrefix(v, "Agent ")
				}
			case "kernel_name", "kernelname":
				v = d.Name
			case "start_timestamp", "beginns":
				v = strconv.FormatInt(d.Start, 10)
			case "end_timestamp", "endns":
				v = strconv.FormatInt(d.End, 10)
			case "grid_size_x":
				v = strconv.FormatInt(d.Grid, 10)
			case "grid_size_y", "grid_size_z", "workgroup_size_y", "workgroup_size_z":
				v = "1"
			case "dispatch_id", "correlation_id", "index":
				v = strconv.Itoa(i + 1)
			default:
				v = "0"
			}
			if stringCols[strings.ToLower(h)] && !(spec.agentAsInt && strings.EqualFold(h, "agent_id")) {
				v = `"` + v + `"`
			}
			b.WriteString(v)
		}
		b.WriteString(eol)
	}
	return b.String()
}

// writeFile writes content to name in a fresh temp dir and returns the path.
func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := t.TempDir() + "/" + name
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func fixture(t testing.TB, elem ...string) string {
	t.Helper()
	return testfix.Path(t, elem...)
}

func diff(t testing.TB, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
}
