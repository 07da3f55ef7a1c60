package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// KernelsHeader is the exact header of `<run>_decode_kernels.csv`.
const KernelsHeader = "kernel,class,roles,port_units,calls,calls_per_token,total_ns,avg_ns,share_pct"

// KernelRow is one kernel name's row in the decode window.
type KernelRow struct {
	Kernel        string
	Class         string
	Roles         []string // sorted
	Units         []string // sorted
	Calls         int64
	CallsPerToken float64 // already rounded to 2 decimals
	TotalNs       int64
	AvgNs         int64
	SharePct      float64 // printed with 3 decimals
}

// AvgNs is total/calls rounded to the nearest integer, ties to even.
func AvgNs(total, calls int64) int64 {
	if calls == 0 {
		return 0
	}
	q, r := total/calls, total%calls
	switch {
	case 2*r > calls:
		q++
	case 2*r == calls && q%2 == 1:
		q++
	}
	return q
}

// WriteKernels writes rows in the repo's format: CRLF line ends, minimal quoting.
// The rows must already be in their final order (total_ns descending).
func WriteKernels(w io.Writer, rows []KernelRow) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(strings.Split(KernelsHeader, ",")); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{
			noCR(r.Kernel), noCR(r.Class), noCR(strings.Join(r.Roles, ";")), noCR(strings.Join(r.Units, ";")),
			strconv.FormatInt(r.Calls, 10), PyFloat(r.CallsPerToken),
			strconv.FormatInt(r.TotalNs, 10), strconv.FormatInt(r.AvgNs, 10),
			strconv.FormatFloat(r.SharePct, 'f', 3, 64),
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// noCR turns each carriage return of a text field into a line feed. The file has CRLF
// line ends, and encoding/csv then drops a lone CR inside a field without a word: a
// hostile kernel name would silently lose it and read back as another name.
func noCR(s string) string { return crToLF.Replace(s) }

var crToLF = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// WriteKernelsFile writes rows to path atomically.
func WriteKernelsFile(path string, rows []KernelRow) error {
	var b bytes.Buffer
	if err := WriteKernels(&b, rows); err != nil {
		return err
	}
	return WriteFileAtomic(path, b.Bytes())
}

// ReadKernels reads a `<run>_decode_kernels.csv` (perfbot's or the repo analyzer's).
func ReadKernels(r io.Reader, name string) ([]KernelRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 9
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading header: %w", name, err)
	}
	if strings.Join(head, ",") != KernelsHeader {
		return nil, fmt.Errorf("%s:1: header %s: want %q", name, safetext.Quote(strings.Join(head, ",")), KernelsHeader)
	}
	var rows []KernelRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		var row KernelRow
		row.Kernel, row.Class = rec[0], rec[1]
		row.Roles = splitExact(rec[2], ";")
		row.Units = splitExact(rec[3], ";")
		ints := []*int64{&row.Calls, &row.TotalNs, &row.AvgNs}
		for i, col := range []int{4, 6, 7} {
			v, err := strconv.ParseInt(rec[col], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s %s: not an integer", name, line, strings.Split(KernelsHeader, ",")[col], safetext.Quote(rec[col]))
			}
			*ints[i] = v
		}
		floats := []*float64{&row.CallsPerToken, &row.SharePct}
		for i, col := range []int{5, 8} {
			v, err := strconv.ParseFloat(rec[col], 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s %s: not a number", name, line, strings.Split(KernelsHeader, ",")[col], safetext.Quote(rec[col]))
			}
			*floats[i] = v
		}
		rows = append(rows, row)
	}
}

// maxKernelsBytes bounds a decode_kernels file: one row per distinct kernel name.
const maxKernelsBytes = 16 << 20

// ReadKernelsFile reads the CSV at path.
func ReadKernelsFile(path string) ([]KernelRow, error) {
	data, err := infile.ReadFile(path, maxKernelsBytes)
	if err != nil {
		return nil, err
	}
	return ReadKernels(bytes.NewReader(data), path)
}

// splitExact splits a list field at sep as it was written: no trimming and no empty
// items dropped (strs.SplitList does both), so that a file read and written back keeps
// its bytes. An empty field is no item.
func splitExact(s, sep string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, sep)
}
