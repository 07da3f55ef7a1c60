package results

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
		return Sampling{}, fmt.Errorf("sampling %q: want greedy, t<T> or t<T>-p<P> (e.g. t0.7-p0.95)", tag)
	}
	t, _ := strconv.ParseFloat(m[1], 64)
	s := Sampling{Temperature: t, TopP: 1}
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
	if len(commit) > 8 {
		commit = commit[:8]
	}
	return gfx + "_" + commit
}
