package rocprof

import (
	"fmt"
	"strings"
	"testing"
)

// A header of maxColumns columns is read; one more is refused, in the small tables and
// in the kernel trace.
func TestColumnLimitAtItsEdge(t *testing.T) {
	t.Parallel()
	header := func(n int) string {
		cells := make([]string, n)
		for i := range cells {
			cells[i] = fmt.Sprintf("C%d", i)
		}
		return strings.Join(cells, ",")
	}
	if tb, err := parseTable([]byte(header(maxColumns)+"\n"), "s.csv"); err != nil || len(tb.header) != maxColumns {
		t.Errorf("table of %d columns: %v", maxColumns, err)
	}
	if _, err := parseTable([]byte(header(maxColumns+1)+"\n"), "s.csv"); err == nil || !strings.Contains(err.Error(), "1025 columns, more than the 1024") {
		t.Errorf("table of %d columns: %v", maxColumns+1, err)
	}
	if h, err := parseTraceHeader([]byte(header(maxColumns-3)+",Kernel_Name,Start_Timestamp,End_Timestamp"), "t.csv", 1); err != nil || len(h.cells) != maxColumns {
		t.Errorf("trace header of %d columns: %v", maxColumns, err)
	}
	if _, err := parseTraceHeader([]byte(header(maxColumns-2)+",Kernel_Name,Start_Timestamp,End_Timestamp"), "t.csv", 1); err == nil || !strings.Contains(err.Error(), "1025 columns, more than the 1024") {
		t.Errorf("trace header of %d columns: %v", maxColumns+1, err)
	}
}

// A float column is read wherever the header puts it, the first column too; a missing
// column reads as 0.
func TestCellFloatAnyColumn(t *testing.T) {
	t.Parallel()
	tb, err := parseTable([]byte("Percentage,Name\n12.5,k\n"), "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := tb.cellFloat(0, 0); err != nil || v != 12.5 {
		t.Errorf("column 0: %v, %v", v, err)
	}
	if v, err := tb.cellFloat(0, -1); err != nil || v != 0 {
		t.Errorf("no column: %v, %v", v, err)
	}
}
