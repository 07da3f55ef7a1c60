package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseSummary: any bytes parse or fail without a panic, and an accepted summary
// round-trips: written out, it reads back valid, and writes the same bytes again.
func FuzzParseSummary(f *testing.F) {
	for _, p := range fixtureRuns(f) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"name": "x_greedy", "class_share_pct": {"a": 1e308}, "port_units": {"1": {"note": "\u001b"}}}`))
	f.Add([]byte(`{"name": "x_t0.7", "top_p": 0.95, "sampling": "t0.7-p0.95", "temperature": 0.7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSummary(data)
		if err != nil {
			return
		}
		out, err := s.MarshalIndent()
		if err != nil {
			t.Fatalf("an accepted summary does not encode: %v", err)
		}
		back, err := ParseSummary(out)
		if err != nil {
			t.Fatalf("a written summary does not read back: %v\n%s", err, out)
		}
		again, err := back.MarshalIndent()
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("the round trip changed the summary:\n%s\n%s", out, again)
		}
	})
}

// FuzzReadKernels: a decode_kernels CSV that reads writes back byte for byte when it
// was written by WriteKernels, and reads back to the same rows in any case.
func FuzzReadKernels(f *testing.F) {
	f.Add([]byte(KernelsHeader + "\r\nk,qmv,a;b,2063,5,1.25,100,20,94.810\r\n"))
	f.Add([]byte(KernelsHeader + "\n\"k,\"\"x\"\"\",,,,1,0.5,3,3,0.000\n"))
	// A lone carriage return in a field: a CSV with CRLF line ends cannot hold one.
	f.Add([]byte(KernelsHeader + "\r\n\"\r\",\"a\rb\",,,0,0.0,0,0,0.000\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ReadKernels(bytes.NewReader(data), "k.csv")
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := WriteKernels(&b, rows); err != nil {
			t.Fatalf("accepted rows do not write: %v", err)
		}
		back, err := ReadKernels(bytes.NewReader(b.Bytes()), "k.csv")
		if err != nil {
			t.Fatalf("written rows do not read back: %v\n%s", err, b.Bytes())
		}
		var again bytes.Buffer
		WriteKernels(&again, back)
		if !bytes.Equal(b.Bytes(), again.Bytes()) {
			t.Fatalf("the round trip changed the rows:\n%q\n%q", b.Bytes(), again.Bytes())
		}
	})
}

// A carriage return in a text field is written as a line feed: encoding/csv with CRLF
// line ends would drop a lone one, and the name would read back as another.
func TestWriteKernelsCarriageReturn(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteKernels(&b, []KernelRow{{Kernel: "a\rb", Class: "x\r\ny", Roles: []string{"\r"}}}); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadKernels(bytes.NewReader(b.Bytes()), "k.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Kernel != "a\nb" || rows[0].Class != "x\ny" || len(rows[0].Roles) != 1 || rows[0].Roles[0] != "\n" {
		t.Errorf("read back %+v from\n%q", rows, b.Bytes())
	}
}

// FuzzReadNightlyNested: any manifest bytes read or fail without a panic, and an
// accepted one names only its own nested folders: confirm-<model> and bisect-<model>,
// one path element each.
func FuzzReadNightlyNested(f *testing.F) {
	f.Add([]byte(`{"stem": "rocm_strixhalo-gfx1151_2026-12-03", "remeasures": [{"model": "m", "confirm": "confirm-m"}], "bisects": [{"model": "m", "good": "` +
		strings.Repeat("a", 40) + `", "bad": "` + strings.Repeat("b", 40) + `", "dir": "bisect-m"}]}`))
	f.Add([]byte(`{"stem": "rocm_strixhalo-gfx1151_2026-12-03", "remeasures": [{"model": "..", "confirm": "confirm-.."}]}`))
	f.Add([]byte(`{"stem": "rocm_strixhalo-gfx1151_2026-12-03", "bisects": [{"model": "m/../x", "dir": "bisect-m/../x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "rocm_strixhalo-gfx1151_2026-12-03"+NightlySuffix)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := ReadNightly(p)
		if err != nil {
			return
		}
		for _, rm := range n.Remeasures {
			if rm.Confirm != "" && (rm.Confirm != ConfirmDirPrefix+rm.Model || !filepath.IsLocal(rm.Confirm) || strings.ContainsAny(rm.Confirm, `/\`)) {
				t.Fatalf("accepted the A/B folder %q of %q", rm.Confirm, rm.Model)
			}
		}
		for _, b := range n.Bisects {
			if b.Dir != "" && (b.Dir != BisectDirPrefix+b.Model || !filepath.IsLocal(b.Dir) || strings.ContainsAny(b.Dir, `/\`)) {
				t.Fatalf("accepted the bisection folder %q of %q", b.Dir, b.Model)
			}
		}
	})
}
