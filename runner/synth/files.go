package synth

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/runner/results"
)

// agentInfoHeader is the 53-column header of agent_info.csv (unchanged from 6.2 to 10.0).
const agentInfoHeader = `"Node_Id","Logical_Node_Id","Agent_Type","Cpu_Cores_Count","Simd_Count","Cpu_Core_Id_Base",` +
	`"Simd_Id_Base","Max_Waves_Per_Simd","Lds_Size_In_Kb","Gds_Size_In_Kb","Num_Gws","Wave_Front_Size","Num_Xcc",` +
	`"Cu_Count","Array_Count","Num_Shader_Banks","Simd_Arrays_Per_Engine","Cu_Per_Simd_Array","Simd_Per_Cu",` +
	`"Max_Slots_Scratch_Cu","Gfx_Target_Version","Vendor_Id","Device_Id","Location_Id","Domain","Drm_Render_Minor",` +
	`"Num_Sdma_Engines","Num_Sdma_Xgmi_Engines","Num_Sdma_Queues_Per_Engine","Num_Cp_Queues",` +
	`"Max_Engine_Clk_Ccompute","Max_Engine_Clk_Fcompute","Sdma_Fw_Version","Fw_Version","Capability",` +
	`"Cu_Per_Engine","Max_Waves_Per_Cu","Family_Id","Workgroup_Max_Size","Grid_Max_Size","Local_Mem_Size",` +
	`"Hive_Id","Gpu_Id","Workgroup_Max_Dim_X","Workgroup_Max_Dim_Y","Workgroup_Max_Dim_Z","Grid_Max_Dim_X",` +
	`"Grid_Max_Dim_Y","Grid_Max_Dim_Z","Name","Vendor_Name","Product_Name","Model_Name"`

// agentInfo is the Strix Halo host: the CPU (logical node 0) and the gfx1151 GPU
// (logical node 1, "Agent 1" in the trace), with rocminfo's values for it.
const agentInfo = agentInfoHeader + "\n" +
	`0,0,"CPU",32,0,0,0,0,0,0,0,0,1,32,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,5187,0,0,0,0,0,0,26,0,0,0,0,0,0,0,0,0,0,0,` +
	`"AMD RYZEN AI MAX+ 395 w/ Radeon 8060S","CPU","AMD RYZEN AI MAX+ 395 w/ Radeon 8060S",""` + "\n" +
	`1,1,"GPU",0,80,0,2147487760,16,64,0,64,32,1,40,4,2,2,10,2,32,110501,4098,5510,62464,0,128,2,0,8,4,5187,2900,` +
	`17,32,1752408704,20,32,150,1024,4294967295,0,0,47631,1024,1024,1024,2147483647,65535,65535,` +
	`"gfx1151","AMD","Radeon 8060S Graphics","ip discovery"` + "\n"

// benchLog renders the bench's output (docs/formats.md §2), with the phase marks only when
// the run was profiled (the bench prints them under MLXCEL_BENCH_PHASE_MARKS=1).
type benchLog struct {
	m              *model
	prompt, tokens int
	loadWallNs     int64
	prefillNs      int64
	decodeNs       int64
	marks          *marks // nil: plain run
	clockNA        string
	offset         int64
	hipblaslt      bool
}

func (l benchLog) String() string {
	var b strings.Builder
	longPrompt := fmt.Sprintf("[long-prompt] target=%d tokens -> using %d tokens (max_context=Some(%d), reserved %d for generation)\n",
		l.prompt, l.prompt, l.m.maxContext, l.tokens)
	mark := func(name string, boot int64) {
		if l.marks == nil {
			return
		}
		mono, bt := strconv.FormatInt(boot-l.offset, 10), strconv.FormatInt(boot, 10)
		switch l.clockNA {
		case "monotonic":
			mono = "na"
		case "boottime":
			bt = "na"
		}
		fmt.Fprintf(&b, "[phase] %s monotonic_ns=%s boottime_ns=%s\n", name, mono, bt)
	}
	b.WriteString("[mlx-rocm] bound HIP device 0: gfx1151 (AMD Radeon 8060S Graphics) cus=20 warp=32 lds=64KB\n")
	fmt.Fprintf(&b, "[Load] wall: %.3f s  MLX peak: 0.00 GB\n", float64(l.loadWallNs)/1e9)
	b.WriteString(longPrompt)
	if l.marks != nil {
		mark("warmup_start", l.marks.warmupStart)
	}
	b.WriteString("[mlx-rocm] gfx1151 native_wmma=1 cus=20 warp=32 low_cu=0 host_WARP_SIZE=32\n")
	if l.hipblaslt {
		b.WriteString("[hipBLASLt caps] device 0 (gfx1151): bf16=1 fp8_e4m3=0 fp8_e5m2=0 int8=1\n")
	}
	b.WriteString(longPrompt)
	if l.marks != nil {
		mark("measured_start", l.marks.measuredStart)
		mark("decode_start", l.marks.decodeStart)
		mark("measured_end", l.marks.measuredEnd)
	}
	prefillS, decodeS := float64(l.prefillNs)/1e9, float64(l.decodeNs)/1e9
	b.WriteString("[Profile Results]\n")
	fmt.Fprintf(&b, "  Prompt tokens:    %d\n", l.prompt)
	fmt.Fprintf(&b, "  Generated tokens: %d\n", l.tokens)
	fmt.Fprintf(&b, "  Prefill:          %.2f ms (%.2f tok/s)\n", prefillS*1e3, float64(l.prompt)/prefillS)
	fmt.Fprintf(&b, "  Decode:           %.2f ms (%.2f tok/s)\n", decodeS*1e3, float64(l.tokens)/decodeS)
	fmt.Fprintf(&b, "  MLX peak memory:  %.2f GB\n", l.m.peakGB)
	return b.String()
}

// configJSON is the model directory's config.json, with floats printed as the Python
// tools that write these files print them (8.0, 1e-05).
func configJSON(m *model) ([]byte, error) {
	b, err := json.MarshalIndent(pyFloats(m.config), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func pyFloats(v any) any {
	switch x := v.(type) {
	case float64:
		return results.Num(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = pyFloats(e)
		}
		return out
	}
	return v
}
