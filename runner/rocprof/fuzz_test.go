package rocprof

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParseKernelTraceNumbers pushes integers of every width through the row parser's
// 8-digits-at-a-time path and its fallbacks, against strconv.
func TestParseKernelTraceNumbers(t *testing.T) {
	t.Parallel()
	var values []string
	digits := "98765432109876543210123"
	for n := 1; n <= len(digits); n++ {
		values = append(values, digits[:n], "1"+strings.Repeat("0", n-1), "0"+digits[:n])
	}
	values = append(values, "9223372036854775807", "9223372036854775808", "-42", "+42", "-9223372036854775808",
		"12345678a", "1234567812345678x", "1234567x12345678", "1x", "", "١٢", "1 2", "0x10", "1e9", "12345678"+"\x00")
	for _, v := range values {
		content := `"Kernel_Name","Start_Timestamp","End_Timestamp"` + "\n" + fmt.Sprintf("\"k\",%s,%s\n", v, v)
		tr, err := parseString(t, content, parseOptions{})
		want, werr := strconv.ParseInt(v, 10, 64)
		if strings.HasPrefix(v, "+") {
			want, werr = strconv.ParseInt(v[1:], 10, 64)
		}
		switch {
		case werr != nil && err == nil:
			t.Errorf("%q: parsed as %d, strconv says %v", v, tr.Dispatches[0].Start, werr)
		case werr != nil:
			if w := fmt.Sprintf("trace.csv:2: Start_Timestamp %q: not a number", v); err.Error() != w {
				t.Errorf("%q: error %q, want %q", v, err, w)
			}
		case err != nil:
			t.Errorf("%q: %v, strconv says %d", v, err, want)
		case tr.Dispatches[0].Start != want || tr.Dispatches[0].End != want:
			t.Errorf("%q: got %d..%d, want %d", v, tr.Dispatches[0].Start, tr.Dispatches[0].End, want)
		}
	}
}

// FuzzParseKernelTrace must never panic, and how the input is cut into chunks and
// spread over workers must never change the outcome.
func FuzzParseKernelTrace(f *testing.F) {
	f.Add([]byte(renderTrace(layoutSpec{header: header7}, sample, "\n")))
	f.Add([]byte("\xEF\xBB\xBF" + renderTrace(layoutSpec{header: header62, agentAsInt: true}, sample, "\r\n")))
	f.Add([]byte(renderTrace(layoutSpec{header: headerLegacy}, sample[:2], "\n")))
	f.Add([]byte(renderTrace(layoutSpec{header: headerRocpd}, sample[:1], "\n") + `"x","KERNEL_DISPATCH","Agent 1",1`))
	f.Add([]byte(`"Kernel_Name","Start_Timestamp","End_Timestamp","Grid_Size_X"` + "\n\"a\"b\",1,2,3\n\"\",-1,0,\n"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		base, baseErr := parseKernelTrace(bytes.NewReader(data), "fuzz.csv", parseOptions{workers: 1})
		for _, opt := range []parseOptions{{chunkSize: 1, workers: 2}, {chunkSize: 7, workers: 3}} {
			got, err := parseKernelTrace(bytes.NewReader(data), "fuzz.csv", opt)
			if (err == nil) != (baseErr == nil) || (err != nil && err.Error() != baseErr.Error()) {
				t.Fatalf("%+v: error %v, one chunk gives %v", opt, err, baseErr)
			}
			if err != nil {
				continue
			}
			if got.Rows != base.Rows || got.Inversions != base.Inversions || got.Layout != base.Layout || got.Duplicates != base.Duplicates {
				t.Fatalf("%+v: rows/inversions/layout/duplicates %d/%d/%s/%d, one chunk gives %d/%d/%s/%d", opt,
					got.Rows, got.Inversions, got.Layout, got.Duplicates, base.Rows, base.Inversions, base.Layout, base.Duplicates)
			}
			if fmt.Sprint(flatten(got)) != fmt.Sprint(flatten(base)) {
				t.Fatalf("%+v: dispatches differ from the one-chunk parse", opt)
			}
		}
		if baseErr == nil {
			for _, n := range base.Names {
				if !utf8.ValidString(n) {
					t.Fatalf("name %q is not valid UTF-8", n)
				}
			}
			for _, d := range base.Dispatches {
				if d.End < d.Start || int(d.Name) >= len(base.Names) || int(d.Agent) >= len(base.Agents) {
					t.Fatalf("bad record %+v (names %d, agents %d)", d, len(base.Names), len(base.Agents))
				}
			}
		}
	})
}

// FuzzParseKernelStats: any bytes parse or fail without a panic, and an accepted file
// reads the same with CRLF line ends.
func FuzzParseKernelStats(f *testing.F) {
	for _, p := range []string{
		fixture(f, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", "Meta-Llama-3.1-8B-Instruct-4bit_greedy_kernel_stats.csv"),
		fixture(f, "rocprofv3", "gfx1201-sllm-component-rocm7.2.1", "component-m8_kernel_stats.csv"),
		fixture(f, "rocprofv3", "gfx1201-sllm-component-rocm7.2.1", "component-m8_domain_stats.csv"),
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(statsHeader + "\n\"k,1\",3,300,1e2,7.5,90,110,0.00000000e+00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseKernelStats(data, "stats.csv")
		if err != nil || bytes.Contains(data, []byte{'\r'}) {
			return
		}
		crlf, err := ParseKernelStats(bytes.ReplaceAll(data, []byte{'\n'}, []byte("\r\n")), "stats.csv")
		if err != nil {
			t.Fatalf("accepted with LF, refused with CRLF: %v", err)
		}
		if fmt.Sprint(got) != fmt.Sprint(crlf) {
			t.Fatalf("CRLF reads differently:\n%v\n%v", got, crlf)
		}
	})
}

// FuzzParseAgentInfo: any bytes parse or fail without a panic, and every agent of an
// accepted file is found again by its logical node id.
func FuzzParseAgentInfo(f *testing.F) {
	for _, p := range []string{
		fixture(f, "rocprofv3", "gfx1201-sllm-component-rocm7.2.1", "component-m8_agent_info.csv"),
		fixture(f, "rocprofv3", "gfx1201-sllm-qwen3.5-9b-rocm7.2.1", "aq4-p3-diagnostic_agent_info.csv"),
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("\"Node_Id\",\"Logical_Node_Id\",\"Agent_Type\",\"Name\"\n1,1,\"GPU\",\"gfx1151\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		agents, err := ParseAgentInfo(data, "agent_info.csv")
		if err != nil {
			return
		}
		for _, a := range agents {
			got, ok := AgentByID(agents, "Agent "+strconv.Itoa(a.LogicalNodeID))
			if a.LogicalNodeID >= 0 && (!ok || got.LogicalNodeID != a.LogicalNodeID) {
				t.Fatalf("agent %+v not found by its logical id (got %+v, %v)", a, got, ok)
			}
		}
	})
}
