package rocprof

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/internal/infile"
)

// Agent is one row of agent_info.csv: a CPU or GPU the profiler saw.
type Agent struct {
	NodeID, LogicalNodeID int
	Type                  string // "CPU" or "GPU"
	CUCount               int
	WaveFrontSize         int
	GfxTargetVersion      int // decimal: gfx1201 is 120001
	Name                  string
	VendorName            string
	ProductName           string
	ModelName             string
}

// ReadAgentInfo reads agent_info.csv in file order. A missing file is nil, nil.
func ReadAgentInfo(path string) ([]Agent, error) {
	data, err := infile.ReadFile(path, maxTableBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading agent info: %w", err)
	}
	return ParseAgentInfo(data, path)
}

// ParseAgentInfo parses the text of an agent_info.csv; file is the name errors show.
func ParseAgentInfo(data []byte, file string) ([]Agent, error) {
	t, err := parseTable(data, file)
	if err != nil {
		return nil, err
	}
	c, err := t.require("Node_Id", "Logical_Node_Id", "Agent_Type", "Name")
	if err != nil {
		return nil, err
	}
	cu, wave, gfx := t.optional("Cu_Count"), t.optional("Wave_Front_Size"), t.optional("Gfx_Target_Version")
	vendor, product, model := t.optional("Vendor_Name"), t.optional("Product_Name"), t.optional("Model_Name")
	out := make([]Agent, len(t.rows))
	for r := range t.rows {
		a := &out[r]
		ints := []struct {
			dst *int
			col int
		}{{&a.NodeID, c[0]}, {&a.LogicalNodeID, c[1]}, {&a.CUCount, cu}, {&a.WaveFrontSize, wave}, {&a.GfxTargetVersion, gfx}}
		for _, f := range ints {
			v, err := t.cellInt(r, f.col)
			if err != nil {
				return nil, err
			}
			*f.dst = int(v)
		}
		a.Type = t.cellText(r, c[2])
		a.Name = t.cellText(r, c[3])
		a.VendorName = t.cellText(r, vendor)
		a.ProductName = t.cellText(r, product)
		a.ModelName = t.cellText(r, model)
	}
	return out, nil
}

// AgentByID finds the agent a trace's Agent_Id text names:
//   - "Agent N" (rocprofv3 7.0+, the default absolute index): Logical_Node_Id == N;
//   - "GPU N" / "CPU N" (--agent-index type-relative): the N-th agent of that type in
//     Logical_Node_Id order;
//   - a bare integer (up to ROCm 6.4): the KFD node id, Node_Id == N.
func AgentByID(agents []Agent, id string) (Agent, bool) {
	id = strings.TrimSpace(id)
	kind, num, spaced := strings.Cut(id, " ")
	if !spaced {
		n, err := strconv.Atoi(id)
		if err != nil {
			return Agent{}, false
		}
		for _, a := range agents {
			if a.NodeID == n {
				return a, true
			}
		}
		return Agent{}, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || n < 0 {
		return Agent{}, false
	}
	if strings.EqualFold(kind, "Agent") {
		for _, a := range agents {
			if a.LogicalNodeID == n {
				return a, true
			}
		}
		return Agent{}, false
	}
	var same []Agent
	for _, a := range agents {
		if strings.EqualFold(a.Type, kind) {
			same = append(same, a)
		}
	}
	slices.SortStableFunc(same, func(x, y Agent) int { return cmp.Compare(x.LogicalNodeID, y.LogicalNodeID) })
	if n < len(same) {
		return same[n], true
	}
	return Agent{}, false
}
