// Package benchlog reads the log of mlxcel's decode bench (mlxcel-bench-decode stdout
// and stderr, docs/formats.md §2): the phase marks on the boot-time and monotonic clocks,
// the results block and the bound HIP device; and it cleans a log for committing. It
// must not run the bench, read traces or decide what a missing results block means:
// the caller does.
package benchlog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// Marks are the four phase marks on one clock, in nanoseconds.
type Marks struct {
	WarmupStart, MeasuredStart, DecodeStart, MeasuredEnd int64
	// OK: all four marks are present and none is `na`.
	OK bool
}

// Log is what a bench log says.
type Log struct {
	Boottime, Monotonic Marks
	// PromptTokens and the rest come from the results block (when HasResults).
	PromptTokens, GeneratedTokens                              int
	PrefillMs, PrefillTokS, DecodeMs, DecodeTokS, PeakMemoryGB float64
	// Device is the bound HIP device, `gfx1151 (AMD Radeon 8060S Graphics)`.
	Device string
	// GfxTarget is the device's first word, `gfx1151`.
	GfxTarget string
	// HasResults says the log has a results block with the lines the metrics need
	// (`Generated tokens:` and `Decode:`).
	HasResults bool
	// Warnings name what the results block lacks beyond those (`Prompt tokens:`,
	// `Prefill:`, `MLX peak memory:`): the figures from a missing line stay 0. They do
	// not name the file, so they can go into a committed summary.
	Warnings []string
}

const (
	clockBoottime  = "boottime_ns"
	clockMonotonic = "monotonic_ns"
)

var phaseNames = []string{"warmup_start", "measured_start", "decode_start", "measured_end"}

var (
	timingRE = regexp.MustCompile(`^(\S+)\s+ms\s+\(\s*(\S+)\s+tok/s\s*\)$`)
	memoryRE = regexp.MustCompile(`^(\S+)\s+GB$`)
	// The key=value tail of the device line: `cus=20 warp=32 lds=64KB`.
	deviceTailRE = regexp.MustCompile(`(\s+[A-Za-z_]+=\S*)+$`)
	// glog's line prefix, as rocprofv3 writes it: `E20260716 02:19:56.319983 12608 file.cpp:111] `
	// (older glog leaves the year out: `W0716 ...`).
	glogRE = regexp.MustCompile(`^[IWEF](?:\d{8}|\d{4}) \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]\s]+\] `)
)

const guardPrefix = "rocm_gpu_guard: "

// ParseFile parses the bench log at path; errors name path and the line.
func ParseFile(path string) (*Log, error) {
	return ParseFileContext(context.Background(), path)
}

// ParseFileContext is ParseFile that stops reading, with ctx's error, once ctx is done.
// Only a regular file is read.
func ParseFileContext(ctx context.Context, path string) (*Log, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading bench log: %w", err)
	}
	defer f.Close()
	return Parse(infile.Reader(ctx, f), path)
}

// maxLineBytes bounds one line of a log: the lines read are under 200 bytes, and a
// file without newlines (a device, a sparse file) must not be buffered whole.
const maxLineBytes = 16 << 20

// mark is one phase mark's value on one clock.
type mark struct {
	v    int64
	na   bool
	line int
}

type parser struct {
	name  string
	marks map[string]map[string]mark // clock -> phase -> mark
	seen  map[string]int             // phase -> line
	// results block
	block     int // line of `[Profile Results]`, 0 before it
	fieldLine map[string]int
	log       Log
}

// Parse reads a bench log. name is used in errors (`name:LINE: ...`). A log without a
// results block parses with HasResults false; a mark given twice, a malformed number,
// marks out of order or a results block missing a line are errors.
func Parse(r io.Reader, name string) (*Log, error) {
	p := &parser{
		name:      name,
		marks:     map[string]map[string]mark{clockBoottime: {}, clockMonotonic: {}},
		seen:      map[string]int{},
		fieldLine: map[string]int{},
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		var err error
		buf, err = readLine(br, buf[:0])
		if errors.Is(err, errLineTooLong) {
			return nil, p.errorf(n, "a line longer than %d MiB: is this the bench's log (and not a binary or a corrupted file)?", maxLineBytes>>20)
		}
		if len(buf) > 0 {
			if perr := p.line(n, strings.TrimSpace(string(buf))); perr != nil {
				return nil, perr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading bench log %s: %w", name, err)
		}
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return &p.log, nil
}

var errLineTooLong = errors.New("line too long")

// readLine appends the next line of br (with its newline, if any) to buf, up to
// maxLineBytes.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > maxLineBytes {
			return buf, errLineTooLong
		}
		buf = append(buf, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}

func (p *parser) errorf(line int, format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", p.name, line, fmt.Sprintf(format, a...))
}

func (p *parser) line(n int, t string) error {
	switch {
	case t == "" || isNoise(t):
		return nil
	case strings.HasPrefix(t, "[phase] "):
		return p.phase(n, strings.Fields(t)[1:])
	case strings.HasPrefix(t, "[mlx-rocm] bound HIP device "):
		p.device(t)
		return nil
	case t == "[Profile Results]":
		if p.block > 0 {
			return p.errorf(n, "a second results block (the first is at line %d); give one bench run per log", p.block)
		}
		p.block = n
		return nil
	case p.block > 0:
		return p.result(n, t)
	}
	return nil
}

func (p *parser) phase(n int, fields []string) error {
	if len(fields) == 0 {
		return nil
	}
	phase := fields[0]
	known := false
	for _, name := range phaseNames {
		known = known || name == phase
	}
	if !known {
		return nil // a mark this reader does not use
	}
	if first, dup := p.seen[phase]; dup {
		return p.errorf(n, "phase mark %s appears twice (first at line %d); give one bench run per log", phase, first)
	}
	p.seen[phase] = n
	for _, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || (k != clockBoottime && k != clockMonotonic) {
			continue
		}
		if v == "na" {
			p.marks[k][phase] = mark{na: true, line: n}
			continue
		}
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil || i < 0 {
			return p.errorf(n, "phase mark %s: %s=%s is not a nanosecond count or na", phase, k, safetext.Quote(v))
		}
		p.marks[k][phase] = mark{v: i, line: n}
	}
	return nil
}

func (p *parser) device(t string) {
	if p.log.Device != "" {
		return
	}
	_, rest, ok := strings.Cut(strings.TrimPrefix(t, "[mlx-rocm] bound HIP device "), ": ")
	if !ok {
		return
	}
	dev := strings.TrimSpace(deviceTailRE.ReplaceAllString(rest, ""))
	if dev == "" {
		return
	}
	p.log.Device = dev
	p.log.GfxTarget = strings.Fields(dev)[0]
}

// The results block's lines, in the order the bench prints them.
var resultKeys = []string{"Prompt tokens", "Generated tokens", "Prefill", "Decode", "MLX peak memory"}

// requiredKeys are the results lines the decode metrics cannot do without; the others
// only fill in figures of the summary, and a block without them gets a warning.
var requiredKeys = map[string]bool{"Generated tokens": true, "Decode": true}

// optionalEffect says what a missing optional line leaves out.
var optionalEffect = map[string]string{
	"Prompt tokens":   "prompt_tokens is 0",
	"Prefill":         "the prefill tok/s figures are 0",
	"MLX peak memory": "the peak memory is unknown",
}

func (p *parser) result(n int, t string) error {
	key, val, ok := strings.Cut(t, ":")
	if !ok {
		return nil
	}
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	known := false
	for _, k := range resultKeys {
		known = known || k == key
	}
	if !known {
		return nil
	}
	if first, dup := p.fieldLine[key]; dup {
		return p.errorf(n, "%q appears twice in the results block (first at line %d)", key+":", first)
	}
	p.fieldLine[key] = n
	l := &p.log
	switch key {
	case "Prompt tokens", "Generated tokens":
		v, err := strconv.Atoi(val)
		if err != nil || v < 0 {
			return p.errorf(n, "%s: %s is not a token count", key, safetext.Quote(val))
		}
		if key == "Prompt tokens" {
			l.PromptTokens = v
		} else {
			l.GeneratedTokens = v
		}
	case "Prefill", "Decode":
		m := timingRE.FindStringSubmatch(val)
		if m == nil {
			return p.errorf(n, "%s: %s is not `<ms> ms (<tok/s> tok/s)`", key, safetext.Quote(val))
		}
		ms, err1 := parseFloat(m[1])
		tps, err2 := parseFloat(m[2])
		if err1 != nil || err2 != nil {
			return p.errorf(n, "%s: %s holds a malformed number", key, safetext.Quote(val))
		}
		if key == "Prefill" {
			l.PrefillMs, l.PrefillTokS = ms, tps
		} else {
			l.DecodeMs, l.DecodeTokS = ms, tps
		}
	case "MLX peak memory":
		m := memoryRE.FindStringSubmatch(val)
		if m == nil {
			return p.errorf(n, "%s: %s is not `<GB> GB`", key, safetext.Quote(val))
		}
		gb, err := parseFloat(m[1])
		if err != nil {
			return p.errorf(n, "%s: %s is a malformed number", key, safetext.Quote(val))
		}
		l.PeakMemoryGB = gb
	}
	return nil
}

func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is not finite", s)
	}
	return f, nil
}

func (p *parser) finish() error {
	if p.block > 0 {
		var missing []string
		for _, k := range resultKeys {
			if _, ok := p.fieldLine[k]; !ok && requiredKeys[k] {
				missing = append(missing, strconv.Quote(k+":"))
			}
		}
		if len(missing) > 0 {
			return p.errorf(p.block, "the results block lacks %s; was the bench cut short?", strings.Join(missing, ", "))
		}
		for _, k := range resultKeys {
			if _, ok := p.fieldLine[k]; !ok && !requiredKeys[k] {
				p.log.Warnings = append(p.log.Warnings, fmt.Sprintf("the results block (line %d) has no %q line: %s",
					p.block, k+":", optionalEffect[k]))
			}
		}
		p.log.HasResults = true
	}
	var err error
	p.log.Boottime, err = p.clock(clockBoottime)
	if err != nil {
		return err
	}
	p.log.Monotonic, err = p.clock(clockMonotonic)
	return err
}

func (p *parser) clock(clock string) (Marks, error) {
	ms := p.marks[clock]
	vals := make([]int64, len(phaseNames))
	for i, phase := range phaseNames {
		m, ok := ms[phase]
		if !ok || m.na {
			return Marks{}, nil
		}
		vals[i] = m.v
		if i > 0 && vals[i] < vals[i-1] {
			return Marks{}, p.errorf(m.line, "phase mark %s (%s=%d) comes before %s (%d); the marks are out of order",
				phase, clock, vals[i], phaseNames[i-1], vals[i-1])
		}
	}
	return Marks{WarmupStart: vals[0], MeasuredStart: vals[1], DecodeStart: vals[2], MeasuredEnd: vals[3], OK: true}, nil
}

// isNoise says whether a trimmed line is another tool's: the guard's echo or a glog
// line of the profiler.
func isNoise(t string) bool {
	return strings.HasPrefix(t, guardPrefix) || glogRE.MatchString(t)
}

// Clean prepares a log for committing: it drops the guard's lines and the profiler's
// glog lines, and replaces each of stripPaths (local folders such as the checkout or
// the runner's work dir) by `<...>` where it starts a path. Line ends are kept.
func Clean(log []byte, stripPaths []string) []byte {
	prefixes := cleanPrefixes(stripPaths)
	out := make([]byte, 0, len(log))
	for rest := log; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n') + 1
		if i == 0 {
			i = len(rest)
		}
		line := rest[:i]
		rest = rest[i:]
		if isNoise(strings.TrimSpace(string(line))) {
			continue
		}
		out = append(out, stripLine(string(line), prefixes)...)
	}
	return out
}

func cleanPrefixes(paths []string) []string {
	var ps []string
	for _, p := range paths {
		p = strings.TrimRight(strings.TrimSpace(p), "/")
		// "" and "/" would match everywhere.
		if p != "" {
			ps = append(ps, p)
		}
	}
	// Longest first, so /a/b/c is replaced before /a/b.
	slices.SortStableFunc(ps, func(a, b string) int { return len(b) - len(a) })
	return ps
}

const placeholder = "<...>"

func stripLine(line string, prefixes []string) string {
	if len(prefixes) == 0 {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		matched := false
		if i == 0 || !isPathChar(line[i-1]) {
			for _, p := range prefixes {
				end := i + len(p)
				if strings.HasPrefix(line[i:], p) && (end == len(line) || line[end] == '/' || !isPathChar(line[end])) {
					b.WriteString(placeholder)
					i = end
					matched = true
					break
				}
			}
		}
		if !matched {
			b.WriteByte(line[i])
			i++
		}
	}
	return b.String()
}

// isPathChar: a prefix only matches a whole path component, so /home/ci does not eat
// the start of /home/circle.
func isPathChar(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c == '~' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
