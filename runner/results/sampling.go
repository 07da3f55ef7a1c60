package results

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/internal/strs"
)

// Sampling is one sampling setting of a decode run. Greedy is Temperature 0, TopP 1.
type Sampling struct {
	Temperature float64
	TopP        float64
}

// Greedy is the argmax setting.
var Greedy = Sampling{Temperature: 0, TopP: 1}

var tagRE = regexp.MustCompile(`^t([0-9]+(?:\.[0-9]+)?)(?:-p([0-9]+(?:\.[0-9]+)?))?$`)

// ParseSampling reads a run tag: `greedy`, `t<T>` or `t<T>-p<P>` (docs/formats.md §3).
func ParseSampling(tag string) (Sampling, error) {
	if tag == "greedy" {
		return Greedy, nil
	}
	m := tagRE.FindStringSubmatch(tag)
	if m == nil {
		return Sampling{}, fmt.Errorf("sampling %s: want greedy, t<T> or t<T>-p<P> (e.g. t0.7-p0.95)", safetext.Quote(tag))
	}
	t, _ := strconv.ParseFloat(m[1], 64)
	s := Sampling{Temperature: t, TopP: 1}
	if t > MaxTemperature {
		return Sampling{}, fmt.Errorf("sampling %s: the temperature must be at most %v", safetext.Quote(tag), MaxTemperature)
	}
	if m[2] != "" {
		p, _ := strconv.ParseFloat(m[2], 64)
		if p <= 0 || p > 1 {
			return Sampling{}, fmt.Errorf("sampling %q: top-p must be in (0, 1]", tag)
		}
		s.TopP = p
	}
	if t == 0 && s.TopP != 1 {
		return Sampling{}, fmt.Errorf("sampling %q: top-p needs a temperature above 0", tag)
	}
	return s, nil
}

// MaxTemperature bounds a sampling temperature: samplers take 0..2, and a larger value
// is a typo, not a setting.
const MaxTemperature = 100

// Check says why s is not a sampling setting: a temperature that is not a finite number
// in 0..MaxTemperature, or a top-p outside (0, 1] (NaN included).
func (s Sampling) Check() error {
	if math.IsNaN(s.Temperature) || s.Temperature < 0 || s.Temperature > MaxTemperature {
		return fmt.Errorf("temperature %v: want a number in 0..%v", s.Temperature, MaxTemperature)
	}
	if !(s.TopP > 0 && s.TopP <= 1) {
		return fmt.Errorf("top-p %v: want a number in (0, 1]", s.TopP)
	}
	return nil
}

// SplitRunName splits a run name `<model dir>_<tag>` into the model dir's base name and
// the run tag, exactly as written (`Qwen3-30B-A3B-4bit_t0.7-p0.95` is
// `Qwen3-30B-A3B-4bit` and `t0.7-p0.95`), with the setting the tag stands for. A tag
// holds no '_', so it is what follows the last one; ok is false when that is not a tag
// ParseSampling accepts or nothing precedes it. Every reader of a run name splits it
// here, so that the model and the sampling a page shows are the ones the run ran.
func SplitRunName(name string) (model, tag string, s Sampling, ok bool) {
	i := strings.LastIndexByte(name, '_')
	if i <= 0 {
		return "", "", Sampling{}, false
	}
	s, err := ParseSampling(name[i+1:])
	if err != nil {
		return "", "", Sampling{}, false
	}
	return name[:i], name[i+1:], s, true
}

// TagOfName returns the run tag a run name ends with (`_greedy`, `_t0.7-p0.95`) and
// whether it has one (SplitRunName).
func TagOfName(name string) (Sampling, string, bool) {
	_, tag, s, ok := SplitRunName(name)
	return s, tag, ok
}

// MaxRunNameBytes keeps `<run>_decode_kernels.csv` within a file name's 255 bytes.
const MaxRunNameBytes = 200

// CheckRunName says why name cannot be a run name. A run name becomes a file name in
// the results folder, so it must be one path element: not empty, no '/' or '\', no
// leading '.', only printable characters (no newline, no terminal escape), valid
// UTF-8, at most MaxRunNameBytes.
func CheckRunName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("run name %s %s: a run name is <model dir>_<tag>, e.g. Meta-Llama-3.1-8B-Instruct-4bit_greedy", safetext.Quote(name), why)
	}
	switch {
	case name == "":
		return errors.New("the run name is empty: a run name is <model dir>_<tag>, e.g. Meta-Llama-3.1-8B-Instruct-4bit_greedy")
	case len(name) > MaxRunNameBytes:
		return bad(fmt.Sprintf("is %d bytes long, more than %d", len(name), MaxRunNameBytes))
	case strings.ContainsAny(name, `/\`):
		return bad("holds a / or \\ (it becomes a file name, not a path)")
	case name[0] == '.':
		return bad("starts with a dot")
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return bad("holds a character that is not printable")
		}
	}
	return nil
}

// Tag is the run tag of the setting: greedy, t<T>, or t<T>-p<P> when P != 1.
func (s Sampling) Tag() string {
	if s.Temperature == 0 {
		return "greedy"
	}
	tag := "t" + strconv.FormatFloat(s.Temperature, 'f', -1, 64)
	if s.TopP != 1 {
		tag += "-p" + strconv.FormatFloat(s.TopP, 'f', -1, 64)
	}
	return tag
}

// BenchArgs are the sampling flags of mlxcel-bench-decode (greedy is T=0, P=1.0).
func (s Sampling) BenchArgs() []string {
	return []string{"--temperature", strconv.FormatFloat(s.Temperature, 'f', -1, 64),
		"--top-p", PyFloat(s.TopP)}
}

// RunName is `<basename of model dir>_<tag>`.
func RunName(modelDir string, s Sampling) string {
	base := filepath.Base(strings.TrimRight(modelDir, "/"))
	return base + "_" + s.Tag()
}

// FolderName is the results folder of one profile: `<gfx>_<commit8>`.
func FolderName(gfx, commit string) string {
	return gfx + "_" + strs.ShortSHA(commit)
}
