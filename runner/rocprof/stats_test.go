package rocprof

import (
	"errors"
	"strings"
	"testing"
)

const statsHeader = `"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"`

func TestParseKernelStatsFloats(t *testing.T) {
	t.Parallel()
	data := "\xEF\xBB\xBF" + statsHeader + "\r\n" +
		`"void k<float, 4>(float const*, int)",3,300,100.000000,73.19,90,110,10.000000` + "\r\n" +
		`"tiny",1,5,5.00000000e+00,7.574e-03,5,5,0.00000000e+00` + "\r\n" +
		`"mid",2,20,10.000000,0.0123,9,11,1.414214` + "\r\n"
	got, err := ParseKernelStats([]byte(data), "stats.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []KernelStat{
		{Name: "void k<float, 4>(float const*, int)", Calls: 3, TotalNs: 300, AverageNs: 100, Percentage: 73.19, MinNs: 90, MaxNs: 110, StdDev: 10},
		{Name: "tiny", Calls: 1, TotalNs: 5, AverageNs: 5, Percentage: 7.574e-03, MinNs: 5, MaxNs: 5},
		{Name: "mid", Calls: 2, TotalNs: 20, AverageNs: 10, Percentage: 0.0123, MinNs: 9, MaxNs: 11, StdDev: 1.414214},
	}
	diff(t, want, got)
}

func TestParseKernelStatsEmptyAndMissing(t *testing.T) {
	t.Parallel()
	got, err := ParseKernelStats([]byte(statsHeader+"\n"), "stats.csv")
	if err != nil || len(got) != 0 {
		t.Errorf("header only: got %v, %v; want no rows", got, err)
	}
	got, err = ReadKernelStats(t.TempDir() + "/absent_kernel_stats.csv")
	if err != nil || got != nil {
		t.Errorf("missing file: got %v, %v; want nil, nil", got, err)
	}
	if _, err := ReadKernelStats(t.TempDir()); err == nil || !strings.HasPrefix(err.Error(), "reading kernel stats: ") {
		t.Errorf("a directory: got %v, want a wrapped read error", err)
	}
}

func TestParseKernelStatsErrors(t *testing.T) {
	t.Parallel()
	row := `"k",3,300,100.000000,73.19,90,110,10.000000`
	cases := []struct{ name, data, want string }{
		{"bad float", statsHeader + "\n" + row + "\n" + `"k",3,300,100.0,7.5x,90,110,1.0` + "\n", `stats.csv:3: Percentage "7.5x": not a number`},
		{"bad int", statsHeader + "\n" + `"k",3.0,300,100.0,7.5,90,110,1.0` + "\n", `stats.csv:2: Calls "3.0": not a number`},
		{"truncated", statsHeader + "\n" + `"k",3,300,100.0` + "\n", "stats.csv:2: row has 4 cells, the header has 8 (truncated row: was the profiler stopped before it finished writing?)"},
		{"missing column", `"Name","Calls","TotalDurationNs"` + "\n", "stats.csv:1: no AverageNs column (have: Name, Calls, TotalDurationNs)"},
		{"empty", "", "stats.csv:1: empty file: no header row (did the profiler exit before writing it?)"},
		{"unterminated", statsHeader + "\n\n" + `"k,3,300,100.0,7.5,90,110,1.0` + "\n", "stats.csv:3: unterminated quoted cell"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseKernelStats([]byte(tc.data), "stats.csv")
			var pe *ParseError
			if err == nil || err.Error() != tc.want || !errors.As(err, &pe) {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}

func TestParseAgentInfoErrors(t *testing.T) {
	t.Parallel()
	hdr := `"Node_Id","Logical_Node_Id","Agent_Type","Cu_Count","Name"` + "\n"
	cases := []struct{ name, data, want string }{
		{"bad int", hdr + `1,1,"GPU",4x,"gfx1151"` + "\n", `agent_info.csv:2: Cu_Count "4x": not a number`},
		{"missing column", `"Node_Id","Agent_Type","Name"` + "\n", "agent_info.csv:1: no Logical_Node_Id column (have: Node_Id, Agent_Type, Name)"},
		{"truncated", hdr + `1,1,"GPU"` + "\n", "agent_info.csv:2: row has 3 cells, the header has 5 (truncated row: was the profiler stopped before it finished writing?)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseAgentInfo([]byte(tc.data), "agent_info.csv")
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
	// Optional columns may be absent; the gfx1151 host has one GPU.
	got, err := ParseAgentInfo([]byte(hdr+`0,0,"CPU",0,"AMD RYZEN AI MAX+ 395"`+"\n"+`1,1,"GPU",20,"gfx1151"`+"\n"), "agent_info.csv")
	if err != nil {
		t.Fatal(err)
	}
	a, ok := AgentByID(got, "Agent 1")
	if !ok || a != (Agent{NodeID: 1, LogicalNodeID: 1, Type: "GPU", CUCount: 20, Name: "gfx1151"}) {
		t.Errorf("AgentByID = %+v, %v", a, ok)
	}
	if got, err := ReadAgentInfo(t.TempDir() + "/absent_agent_info.csv"); got != nil || err != nil {
		t.Errorf("missing file: got %v, %v; want nil, nil", got, err)
	}
}
