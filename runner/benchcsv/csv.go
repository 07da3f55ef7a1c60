package benchcsv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// MaxFileBytes bounds one CSV: a nightly file has a few dozen rows; anything this large
// is not a harness file.
const MaxFileBytes = 8 << 20

// ROCmHeader is the header of a ROCm run of scripts/bench_decode.sh (docs/formats.md §6):
// the historical columns, the two commits, and the two ROCm-only provenance columns.
var ROCmHeader = []string{"model", "model_path", "prompt_tokens", "generated_tokens", "prefill_ms", "prefill_tok_s",
	"decode_ms", "decode_tok_s", "date", "hardware", "mlxcel_version", "build_type", "max_tokens", "prompt",
	"prompt_target_len", "mlxcel_commit", "mlx_commit", "mlx_rocm_overlay_commit", "hip_version"}

// BaselineHeader is the header of scripts/bench_mlxlm.py's files (14 columns).
var BaselineHeader = []string{"model", "model_path", "prompt_tokens", "generated_tokens", "prefill_ms", "prefill_tok_s",
	"decode_ms", "decode_tok_s", "date", "hardware", "baseline_version", "build_type", "max_tokens", "prompt"}

// required are the columns without which a file cannot be read as benchmark results.
var required = []string{"model", "decode_tok_s", "prefill_tok_s", "date", "hardware"}

// Status tokens the harnesses write (docs/formats.md §6). Others of the same shape
// (FAIL:timeout from bench_mlxlm.py) are kept as they are.
const (
	SkipOOMEstimate = "SKIP:oom_estimate"
	SkipOOM         = "SKIP:oom"
	FailBench       = "FAIL:bench"
	FailNoOutput    = "FAIL:no_output"
)

// Row is one line of a harness file. A number the row does not carry is zero with its
// Has flag false.
type Row struct {
	Line int // 1-based line in the file: the anchor a link to the row uses

	Model           string
	ModelPath       string
	PromptTokens    int
	GeneratedTokens int
	PrefillMs       float64
	PrefillTokS     float64
	DecodeMs        float64
	DecodeTokS      float64
	HasPrefill      bool
	HasDecode       bool
	Date            string
	Hardware        string
	// Version is mlxcel_version (mlx_version in older files) or baseline_version.
	Version         string
	BuildType       string
	MaxTokens       string
	Prompt          string
	PromptTargetLen string
	MlxcelCommit    string
	MlxCommit       string
	OverlayCommit   string
	HIPVersion      string
	// Status is "" for a measured row, else the harness's SKIP:/FAIL: token.
	Status string
}

// OK says the row is a measurement.
func (r Row) OK() bool { return r.Status == "" && r.HasDecode }

// File is one harness file, read.
type File struct {
	Path   string
	Name   Name
	Header []string
	Rows   []Row
	// col maps a header name to its index.
	col map[string]int
}

// Has says the header has the column.
func (f *File) Has(column string) bool {
	_, ok := f.col[column]
	return ok
}

// IsBaseline says the file is the mlx-lm baseline's (by its name or its header).
func (f *File) IsBaseline() bool {
	return f.Name.Backend == Baseline || f.Has("baseline_version")
}

// Models lists the models of the file in the order they first appear.
func (f *File) Models() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range f.Rows {
		if !seen[r.Model] {
			seen[r.Model] = true
			out = append(out, r.Model)
		}
	}
	return out
}

// RowsOf returns the rows of one model (several when the harness repeated it).
func (f *File) RowsOf(model string) []Row {
	var out []Row
	for _, r := range f.Rows {
		if r.Model == model {
			out = append(out, r)
		}
	}
	return out
}

// ReadFile reads a harness file; its base name must be a harness name.
func ReadFile(path string) (*File, error) {
	n, err := ParseName(filepath.Base(path))
	if err != nil {
		return nil, err
	}
	b, err := infile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("reading the benchmark CSV: %w", err)
	}
	f, err := Parse(b, filepath.Base(path))
	if err != nil {
		return nil, err
	}
	f.Path, f.Name = path, n
	return f, nil
}

// Parse reads the text of a harness file; name is for errors. Columns are read by
// header name (a trailing column on one runtime's files does not shift another's), the
// prompt is quoted and holds a comma, and a SKIP:/FAIL: token after prompt_target_len
// (or after the last column, in the baseline's files) is the row's status.
func Parse(b []byte, name string) (*File, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s is empty: the harness wrote no header", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading the header: %w", name, err)
	}
	f := &File{Header: header, col: map[string]int{}}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		header[i] = h
		if _, dup := f.col[h]; dup {
			return nil, fmt.Errorf("%s: column %s appears twice in the header", name, safetext.Quote(h))
		}
		f.col[h] = i
	}
	var missing []string
	for _, c := range required {
		if !f.Has(c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: the header has no %s column: not a benchmark CSV of docs/formats.md §6", name, strings.Join(missing, ", "))
	}
	statusAt := len(header)
	if i, ok := f.col["prompt_target_len"]; ok {
		statusAt = i + 1
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s line %d: %v", name, pe.StartLine, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		row, err := f.row(rec, statusAt)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		row.Line = line
		f.Rows = append(f.Rows, row)
	}
	return f, nil
}

func isStatus(s string) bool {
	return strings.HasPrefix(s, "SKIP:") || strings.HasPrefix(s, "FAIL:")
}

func (f *File) row(rec []string, statusAt int) (Row, error) {
	var status string
	if len(rec) == len(f.Header)+1 {
		switch {
		case statusAt < len(rec) && isStatus(rec[statusAt]):
			status = rec[statusAt]
			rec = append(rec[:statusAt:statusAt], rec[statusAt+1:]...)
		case isStatus(rec[len(rec)-1]):
			status = rec[len(rec)-1]
			rec = rec[:len(rec)-1]
		}
	}
	if len(rec) != len(f.Header) {
		return Row{}, fmt.Errorf("%d fields, the header has %d", len(rec), len(f.Header))
	}
	get := func(c string) string {
		if i, ok := f.col[c]; ok {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	r := Row{
		Model: get("model"), ModelPath: get("model_path"), Date: get("date"), Hardware: get("hardware"),
		BuildType: get("build_type"), MaxTokens: get("max_tokens"), Prompt: get("prompt"),
		PromptTargetLen: get("prompt_target_len"), MlxcelCommit: get("mlxcel_commit"), MlxCommit: get("mlx_commit"),
		OverlayCommit: get("mlx_rocm_overlay_commit"), HIPVersion: get("hip_version"), Status: status,
	}
	for _, c := range []string{"mlxcel_version", "mlx_version", "baseline_version"} {
		if v := get(c); v != "" {
			r.Version = v
			break
		}
	}
	if r.Model == "" {
		return Row{}, errors.New("no model name")
	}
	var err error
	num := func(c string, dst *float64) bool {
		s := get(c)
		if s == "" || err != nil {
			return false
		}
		v, perr := strconv.ParseFloat(s, 64)
		if perr != nil || v < 0 || v != v || v > 1e12 {
			err = fmt.Errorf("%s %s is not a number", c, safetext.Quote(s))
			return false
		}
		*dst = v
		return true
	}
	integer := func(c string, dst *int) {
		var v float64
		if num(c, &v) {
			*dst = int(v)
		}
	}
	integer("prompt_tokens", &r.PromptTokens)
	integer("generated_tokens", &r.GeneratedTokens)
	num("prefill_ms", &r.PrefillMs)
	r.HasPrefill = num("prefill_tok_s", &r.PrefillTokS)
	num("decode_ms", &r.DecodeMs)
	r.HasDecode = num("decode_tok_s", &r.DecodeTokS)
	if err != nil {
		return Row{}, err
	}
	return r, nil
}

// Record is the row as the harness writes it under header: the result token right
// after prompt_target_len (after the last column when there is none), numbers with two
// decimals as the harnesses print them, empty when the row has none.
func (r Row) Record(header []string) []string {
	num := func(has bool, v float64) string {
		if !has {
			return ""
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	count := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	vals := map[string]string{
		"model": r.Model, "model_path": r.ModelPath, "prompt_tokens": count(r.PromptTokens), "generated_tokens": count(r.GeneratedTokens),
		"prefill_ms": num(r.HasPrefill, r.PrefillMs), "prefill_tok_s": num(r.HasPrefill, r.PrefillTokS),
		"decode_ms": num(r.HasDecode, r.DecodeMs), "decode_tok_s": num(r.HasDecode, r.DecodeTokS),
		"date": r.Date, "hardware": r.Hardware, "mlxcel_version": r.Version, "mlx_version": r.Version, "baseline_version": r.Version,
		"build_type": r.BuildType, "max_tokens": r.MaxTokens, "prompt": r.Prompt, "prompt_target_len": r.PromptTargetLen,
		"mlxcel_commit": r.MlxcelCommit, "mlx_commit": r.MlxCommit, "mlx_rocm_overlay_commit": r.OverlayCommit, "hip_version": r.HIPVersion,
	}
	var out []string
	for _, h := range header {
		out = append(out, vals[h])
		if r.Status != "" && h == "prompt_target_len" {
			out = append(out, r.Status)
		}
	}
	if r.Status != "" && !slices.Contains(header, "prompt_target_len") {
		out = append(out, r.Status)
	}
	return out
}

// Format writes rows under header as a harness file.
func Format(header []string, rows []Row) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(header)
	for _, r := range rows {
		_ = w.Write(r.Record(header))
	}
	w.Flush()
	return b.Bytes()
}
