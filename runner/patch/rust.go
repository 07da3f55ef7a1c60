package patch

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// RustPath is the test file, relative to the repo root.
const RustPath = "src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs"

// NewGate is the condition the gates get once the tests pass on ROCm. The file lives in
// mlxcel-core, where `crate::` always resolves; an unqualified or `mlxcel_core::` name
// would depend on the file's imports or an `extern crate self` alias.
const NewGate = "if !crate::gpu_backend_available() {"

// NewDocSentence replaces the module doc's Metal-or-CUDA sentence.
const NewDocSentence = "GPU-only: these run on every GPU backend (`gpu_backend_available()`), ROCm included, and skip on a CPU-only build."

const pathPrefix = `(?:crate::|mlxcel_core::)?`

var (
	// enumeration is the checker's rule 4 pattern: Metal and CUDA joined by && or ||,
	// either order, optional `!` and path prefixes. The two names must differ.
	enumeration = regexp.MustCompile(`!?\s*` + pathPrefix + `(metal|cuda)_is_available\(\)\s*(?:&&|\|\|)\s*!?\s*` + pathPrefix + `(metal|cuda)_is_available\(\)`)
	// oldGate is the one gate form the patcher replaces: `if !metal && !cuda {` alone
	// on its line (either order).
	oldGate = regexp.MustCompile(`^([ \t]*)if[ \t]+![ \t]*` + pathPrefix + `(metal|cuda)_is_available\(\)[ \t]*&&[ \t]*![ \t]*` + pathPrefix + `(metal|cuda)_is_available\(\)[ \t]*\{([ \t]*)$`)
	newGate = regexp.MustCompile(`^[ \t]*if[ \t]+![ \t]*` + pathPrefix + `gpu_backend_available\(\)[ \t]*\{[ \t]*$`)
	anyFn   = regexp.MustCompile(`^[ \t]*(?:pub(?:\([a-z: ]+\))?[ \t]+)?(?:async[ \t]+)?(?:unsafe[ \t]+)?fn[ \t]+([A-Za-z_][A-Za-z0-9_]*)`)
)

// fnName returns the name of the fn a code line declares, or "".
func fnName(s string) string {
	if !strings.Contains(s, "fn ") && !strings.Contains(s, "fn\t") || isComment(s) {
		return ""
	}
	if m := anyFn.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func isComment(s string) bool { return strings.HasPrefix(strings.TrimLeft(s, " \t"), "//") }

// enumerates reports whether a code line holds a Metal/CUDA enumeration.
func enumerates(s string) bool {
	if !strings.Contains(s, "_is_available") || isComment(s) {
		return false
	}
	for _, m := range enumeration.FindAllStringSubmatch(s, -1) {
		if m[1] != m[2] {
			return true
		}
	}
	return false
}

func isOldGate(s string) (indent, trailing string, ok bool) {
	m := oldGate.FindStringSubmatch(s)
	if m == nil || m[2] == m[3] {
		return "", "", false
	}
	return m[1], m[4], true
}

type gateState string

const (
	stateUnknown   gateState = ""
	stateEnumerate gateState = "metal-cuda" // the gates still enumerate Metal and CUDA
	statePredicate gateState = "predicate"  // the gates already ask gpu_backend_available()
)

// rustPlan is what patching the test file would do.
type rustPlan struct {
	state         gateState
	out           string
	gatesReplaced int
	docRewritten  bool
}

func (p rustPlan) changes() []string {
	var c []string
	if p.gatesReplaced > 0 {
		c = append(c, fmt.Sprintf("%d gates now ask `crate::gpu_backend_available()` instead of Metal and CUDA", p.gatesReplaced))
	}
	if p.docRewritten {
		c = append(c, "the module doc now says the tests run on every GPU backend, ROCm included")
	}
	return c
}

// planRust checks the test file and computes its patched text for the decision.
func planRust(src string, d Decision) (rustPlan, []Problem) {
	ps := &problems{path: RustPath}
	ls := splitLines(src)
	plan := rustPlan{out: src}

	fns := make([]string, len(ls)) // the fn each line declares, if any
	for i, l := range ls {
		fns[i] = fnName(l.text)
	}
	gates := map[int]gateState{} // line index -> gate kind, one per test
	reported := map[int]bool{}   // first lines of the tests already found wrong
	for _, name := range TestNames {
		i, g := findGate(ls, fns, name, ps)
		switch {
		case g != stateUnknown:
			gates[i] = g
		case i >= 0:
			reported[i] = true
		}
	}

	for i, l := range ls {
		if !enumerates(l.text) {
			continue
		}
		if gates[i] == stateEnumerate || reported[i] {
			continue
		}
		where := "outside the three grouped_gemm tests"
		if fn := enclosingFn(fns, i); fn != "" {
			where = "in fn " + fn
		}
		ps.add(i+1, "found a Metal/CUDA gate %s: %s; perfbot patches only the three grouped_gemm test gates: move this one to a predicate (or out of this file) by hand", where, quote(l.text))
	}

	counts := map[gateState]int{}
	for _, g := range gates {
		counts[g]++
	}
	switch {
	case counts[stateEnumerate] == len(TestNames):
		plan.state = stateEnumerate
	case counts[statePredicate] == len(TestNames):
		plan.state = statePredicate
	case counts[stateEnumerate] > 0 && counts[statePredicate] > 0:
		ps.add(0, "the gates are mixed: %d still enumerate Metal and CUDA and %d already ask gpu_backend_available(); make them agree by hand",
			counts[stateEnumerate], counts[statePredicate])
	}
	if len(ps.list) > 0 {
		return plan, ps.list
	}

	switch d {
	case Record:
		if plan.state == statePredicate {
			ps.add(0, "the gates already ask gpu_backend_available(), but a test failed on ROCm: perfbot never reverts gates; restore the Metal/CUDA gates and the checker entry by hand if the switch was premature")
			return plan, ps.list
		}
	case Switch:
		out := ls
		if plan.state == stateEnumerate {
			out = append([]line(nil), ls...)
			for i, g := range gates {
				if g != stateEnumerate {
					continue
				}
				indent, trailing, _ := isOldGate(out[i].text)
				out[i].text = indent + NewGate + trailing
				plan.gatesReplaced++
			}
		}
		out, rewritten := rewriteModuleDoc(out, ps)
		if len(ps.list) > 0 {
			return plan, ps.list
		}
		plan.docRewritten = rewritten
		plan.out = joinLines(out)
	}
	return plan, nil
}

// findGate finds `#[test] fn name` and returns the line index of its gate and the
// gate's kind, or adds a problem saying what it found instead (then the index is that
// of the first statement it looked at, or -1).
func findGate(ls []line, fns []string, name string, ps *problems) (int, gateState) {
	var at []int
	for i, n := range fns {
		if n == name {
			at = append(at, i)
		}
	}
	switch len(at) {
	case 0:
		ps.add(0, "no fn %s found (test fns in the file: %s); the grouped_gemm test was renamed or removed", name, strings.Join(testFns(ls, fns), ", "))
		return -1, stateUnknown
	case 1:
	default:
		lines := make([]string, len(at))
		for k, i := range at {
			lines[k] = fmt.Sprint(i + 1)
		}
		ps.add(at[0]+1, "fn %s is defined %d times (lines %s); expected once", name, len(at), strings.Join(lines, ", "))
		return -1, stateUnknown
	}
	fn := at[0]
	if !hasTestAttr(ls, fn) {
		ps.add(fn+1, "fn %s is not marked #[test]: found %s", name, quote(ls[fn].text))
		return -1, stateUnknown
	}
	if !strings.HasSuffix(strings.TrimRight(ls[fn].text, " \t"), "{") {
		ps.add(fn+1, "fn %s: expected its body to open on the signature line, found %s", name, quote(ls[fn].text))
		return -1, stateUnknown
	}
	g := fn + 1
	for g < len(ls) && (strings.TrimSpace(ls[g].text) == "" || isComment(ls[g].text)) {
		g++
	}
	if g >= len(ls) {
		ps.add(fn+1, "fn %s has no body", name)
		return -1, stateUnknown
	}
	kind := stateUnknown
	if _, _, ok := isOldGate(ls[g].text); ok {
		kind = stateEnumerate
	} else if newGate.MatchString(ls[g].text) {
		kind = statePredicate
	}
	if kind == stateUnknown {
		ps.add(g+1, "fn %s does not start with the gate `if !crate::metal_is_available() && !crate::cuda_is_available() {` on its own line: found %s", name, quote(ls[g].text))
		return g, stateUnknown
	}
	if g+2 >= len(ls) || strings.TrimSpace(ls[g+1].text) != "return;" || strings.TrimSpace(ls[g+2].text) != "}" {
		found := ""
		if g+1 < len(ls) {
			found = ls[g+1].text
		}
		ps.add(g+2, "the gate of fn %s is not followed by `return;` and `}` on their own lines: found %s", name, quote(found))
		return g, stateUnknown
	}
	return g, kind
}

// hasTestAttr looks for #[test] among the attributes and comments above a fn.
func hasTestAttr(ls []line, fn int) bool {
	for i := fn - 1; i >= 0; i-- {
		t := strings.TrimSpace(ls[i].text)
		if t == "#[test]" {
			return true
		}
		if !strings.HasPrefix(t, "#[") && !strings.HasPrefix(t, "//") {
			return false
		}
	}
	return false
}

func testFns(ls []line, fns []string) []string {
	var names []string
	for i, n := range fns {
		if n != "" && hasTestAttr(ls, i) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

// enclosingFn names the nearest fn declared above line i (a good enough guess for
// a message).
func enclosingFn(fns []string, i int) string {
	for ; i >= 0; i-- {
		if fns[i] != "" {
			return fns[i]
		}
	}
	return ""
}

// docPara is one paragraph of the module doc: lines [from, to).
type docPara struct{ from, to int }

// moduleDoc returns the paragraphs of the leading `//!` block (inner attributes and
// blank lines may sit among them).
func moduleDoc(ls []line) []docPara {
	var paras []docPara
	start := -1
	end := 0
	for i, l := range ls {
		t := strings.TrimSpace(l.text)
		if strings.HasPrefix(t, "//!") {
			if strings.TrimSpace(t[3:]) == "" {
				if start >= 0 {
					paras = append(paras, docPara{start, i})
					start = -1
				}
				continue
			}
			if start < 0 {
				start = i
			}
			end = i + 1
			continue
		}
		// Blank lines, inner attributes and plain comments (a licence header) may sit
		// around the module doc.
		if t == "" || strings.HasPrefix(t, "#![") || strings.HasPrefix(t, "//") {
			if start >= 0 {
				paras = append(paras, docPara{start, end})
				start = -1
			}
			continue
		}
		break
	}
	if start >= 0 {
		paras = append(paras, docPara{start, end})
	}
	return paras
}

// docContent returns a doc line's text after `//!` and one optional space.
func docContent(s string) (prefix, text string) {
	i := strings.Index(s, "//!")
	p := s[:i+3]
	rest := s[i+3:]
	if strings.HasPrefix(rest, " ") {
		p += " "
		rest = rest[1:]
	}
	return p, strings.TrimRight(rest, " \t")
}

func mentionsMetalAndCUDA(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "metal") && strings.Contains(l, "cuda")
}

// rewriteModuleDoc replaces the Metal-or-CUDA sentence in the last module doc
// paragraph with NewDocSentence. A paragraph that already mentions
// gpu_backend_available() and no longer names Metal and CUDA is left alone, which
// makes a second run a no-op.
func rewriteModuleDoc(ls []line, ps *problems) ([]line, bool) {
	paras := moduleDoc(ls)
	if len(paras) == 0 {
		ps.add(1, "no module doc (`//!` lines) at the top of the file; expected one ending with a paragraph like `//! GPU-only (Metal or CUDA); these skip on a CPU-only build.`")
		return ls, false
	}
	last := paras[len(paras)-1]
	var words []string
	width := 0
	for _, p := range paras {
		for i := p.from; i < p.to; i++ {
			width = max(width, displayWidth(ls[i].text))
		}
	}
	for i := last.from; i < last.to; i++ {
		_, t := docContent(ls[i].text)
		words = append(words, strings.Fields(t)...)
	}
	text := strings.Join(words, " ")
	sentences := splitSentences(text)
	target := -1
	for k, s := range sentences {
		if !mentionsMetalAndCUDA(s) {
			continue
		}
		if target >= 0 {
			ps.add(last.from+1, "the last module doc paragraph has more than one sentence naming Metal and CUDA (%s and %s); perfbot rewrites exactly one: reword it by hand",
				quote(sentences[target]), quote(s))
			return ls, false
		}
		target = k
	}
	if target < 0 {
		if strings.Contains(text, "gpu_backend_available") {
			return ls, false
		}
		ps.add(last.from+1, "the module doc does not end with a paragraph saying the tests are Metal-or-CUDA-only (like `//! GPU-only (Metal or CUDA); these skip on a CPU-only build.`): found %s", quote(text))
		return ls, false
	}
	sentences[target] = NewDocSentence
	prefix, _ := docContent(ls[last.from].text)
	width = min(max(width, 80), 100)
	wrapped := wrap(strings.Join(sentences, " "), width-displayWidth(prefix))
	eol := ls[last.from].eol
	if eol == "" {
		eol = newline(ls)
	}
	repl := make([]line, len(wrapped))
	for k, w := range wrapped {
		repl[k] = line{text: prefix + w, eol: eol}
	}
	repl[len(repl)-1].eol = ls[last.to-1].eol
	return splice(ls, last.from, last.to, repl...), true
}

// splitSentences splits at ". ", "! " or "? " followed by an upper-case letter or a
// backtick, so "e.g. the" stays whole.
func splitSentences(text string) []string {
	var out []string
	rs := []rune(text)
	start := 0
	for i := 0; i+2 < len(rs); i++ {
		if (rs[i] == '.' || rs[i] == '!' || rs[i] == '?') && rs[i+1] == ' ' && (unicode.IsUpper(rs[i+2]) || rs[i+2] == '`') {
			out = append(out, string(rs[start:i+1]))
			start = i + 2
		}
	}
	return append(out, string(rs[start:]))
}

// wrap fills words greedily into lines of at most width runes (a longer word gets a
// line of its own).
func wrap(text string, width int) []string {
	var out []string
	cur := ""
	for _, w := range strings.Fields(text) {
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) <= width:
			cur += " " + w
		default:
			out = append(out, cur)
			cur = w
		}
	}
	return append(out, cur)
}

// displayWidth counts runes, a tab as four columns.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		if r == '\t' {
			n += 4
		} else {
			n++
		}
	}
	return n
}
