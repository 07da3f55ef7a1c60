package synth

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/lablup/perfbot/internal/safetext"
)

// Change is a known change planted in a synthetic run, as a commit of the target
// repository would make it: kernels made faster by a factor, kernels no longer
// dispatched, new kernels, and the whole decode step made faster or slower. The fake
// host reads it from a file of the commit's tree (fake-change.txt, ParseChange), so a
// compare of two commits has a known answer.
type Change struct {
	Faster  []FasterKernel
	Removed []string // substrings: every decode kernel whose name holds one is gone
	Added   []AddedKernel
	// Decode divides every decode kernel's duration and host gap (1: no change; 1.1
	// makes the decode about 10 % faster in tok/s); 0 means 1. The fake harness
	// multiplies its decode tok/s by the same factor.
	Decode float64
}

// FasterKernel makes every decode kernel whose name holds Match run Factor times
// faster (2: half the time).
type FasterKernel struct {
	Match  string
	Factor float64
}

// AddedKernel is a new kernel dispatched once per decode step, before the sampling
// tail: Name as the trace gives it, Class as docs/analysis.md §4 names it, NS its mean
// duration.
type AddedKernel struct {
	Name  string
	Class string
	NS    float64
}

// Empty says the change changes nothing.
func (c *Change) Empty() bool {
	return c == nil || len(c.Faster) == 0 && len(c.Removed) == 0 && len(c.Added) == 0 && (c.Decode == 0 || c.Decode == 1)
}

// MaxChangeBytes bounds a change file.
const MaxChangeBytes = 64 << 10

// ParseChange reads a change file, one instruction a line ('#' starts a comment):
//
//	faster <name part> <factor>      the kernels whose name holds it run factor times faster
//	removed <name part>              those kernels are no longer dispatched
//	added <name> <class> <ns>        a new kernel, once per decode step
//	decode <factor>                  the whole decode step factor times faster
//
// Names are one word (no spaces); factors are in 0.01..100.
func ParseChange(b []byte) (Change, error) {
	var c Change
	if len(b) > MaxChangeBytes {
		return c, fmt.Errorf("the change file is %d bytes, more than %d", len(b), MaxChangeBytes)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	for sc.Scan() {
		n++
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(why string) error {
			return fmt.Errorf("change line %d %s: %s", n, safetext.Quote(strings.TrimSpace(line)), why)
		}
		factor := func(s string) (float64, error) {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(x) || x < 0.01 || x > 100 {
				return 0, bad("the factor must be a number in 0.01..100")
			}
			return x, nil
		}
		for _, w := range f[1:] {
			if strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsPrint(r) }) {
				return c, bad("a word holds a character that is not printable")
			}
		}
		switch {
		case f[0] == "faster" && len(f) == 3:
			x, err := factor(f[2])
			if err != nil {
				return c, err
			}
			c.Faster = append(c.Faster, FasterKernel{Match: f[1], Factor: x})
		case f[0] == "removed" && len(f) == 2:
			c.Removed = append(c.Removed, f[1])
		case f[0] == "added" && len(f) == 4:
			ns, err := strconv.ParseFloat(f[3], 64)
			if err != nil || !(ns >= 100 && ns <= 1e8) {
				return c, bad("the duration must be 100..1e8 ns")
			}
			c.Added = append(c.Added, AddedKernel{Name: f[1], Class: f[2], NS: ns})
		case f[0] == "decode" && len(f) == 2:
			x, err := factor(f[1])
			if err != nil {
				return c, err
			}
			c.Decode = x
		default:
			return c, bad("want `faster NAME FACTOR`, `removed NAME`, `added NAME CLASS NS` or `decode FACTOR`")
		}
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	return c, nil
}

// plant applies the change to the decode step templates (step and grow), before the
// prefill is built from them. bodyLen is the step's dispatches before the sampling
// tail; the new one is returned. Every name part must match a kernel of the body; the
// step's last dispatch (the token's arg_reduce_final) is never removed.
func (p *plan) plant(c *Change, ops []op, bodyLen int) ([]op, int, error) {
	names := func(o op) string { return p.cat.kernels[o.k].name }
	for _, f := range c.Faster {
		hit := false
		for i := range ops {
			if strings.Contains(names(ops[i]), f.Match) {
				ops[i].dur /= f.Factor
				hit = true
			}
		}
		if !hit {
			return nil, 0, fmt.Errorf("faster %s: no kernel of the %s step has that in its name", safetext.Quote(f.Match), p.m.key)
		}
	}
	for _, r := range c.Removed {
		kept := ops[:0:0]
		body := 0
		for i, o := range ops {
			if strings.Contains(names(o), r) && i < len(ops)-1 {
				continue
			}
			kept = append(kept, o)
			if i < bodyLen {
				body++
			}
		}
		if len(kept) == len(ops) {
			return nil, 0, fmt.Errorf("removed %s: no kernel of the %s step has that in its name", safetext.Quote(r), p.m.key)
		}
		if body == 0 {
			return nil, 0, fmt.Errorf("removed %s: that would leave the %s step without a forward pass", safetext.Quote(r), p.m.key)
		}
		ops, bodyLen = kept, body
	}
	for _, a := range c.Added {
		k := p.cat.k(a.Name, a.Class)
		wg := p.cat.kernels[k].wg
		o := op{k: k, role: roleUnattributed, group: gRest, dur: a.NS, grid: [3]int64{wg * 64, 1, 1}, gapW: 0.3}
		ops = append(ops[:bodyLen], append([]op{o}, ops[bodyLen:]...)...)
		bodyLen++
	}
	if c.Decode > 0 && c.Decode != 1 {
		for i := range ops {
			ops[i].dur /= c.Decode
		}
	}
	return ops, bodyLen, nil
}
