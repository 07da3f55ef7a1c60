package patch

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// CheckerPath is the repo's dispatch checker, relative to the repo root.
const CheckerPath = "scripts/ci/check_kernel_port_dispatch.py"

const setName = "BACKEND_ENUMERATION_TODO"

var (
	assignment = regexp.MustCompile(`^([ \t]*)` + setName + `\b[ \t]*(?::[^=]*)?=[ \t]*(.*)$`)
	setEntry   = regexp.MustCompile(`^([ \t]*)(?:"([^"\\]*)"|'([^'\\]*)')[ \t]*(,?)([ \t]*)(#.*)?$`)
	emptySet   = regexp.MustCompile(`^set\(\s*\)[ \t]*(#.*)?$`)
	openBrace  = regexp.MustCompile(`^\{[ \t]*(#.*)?$`)
	closeBrace = regexp.MustCompile(`^[ \t]*\}[ \t]*(#.*)?$`)
	quoted     = regexp.MustCompile(`"([^"\\]*)"|'([^'\\]*)'`)
	predicate  = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\(\)`)
	// threadPrefix is the start of a Rust panic line: thread 'name' panicked at ...
	threadPrefix = regexp.MustCompile(`^\s*thread '[^']*' `)
	listItem     = regexp.MustCompile(`^#([ \t]*)(?:[-*+][ \t]+)?(.*)$`)
	// countPhrase finds "3 files still enumerate" style counts in the comment block.
	countPhrase = regexp.MustCompile(`(?i)\b(\d+|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)([ \t]+)(files|file|entries|entry|paths|path)\b(?:([ \t]+)((?:still[ \t]+)?)(enumerates|enumerate|waits|wait|needs|need|remains|remain|is|are|has|have|uses|use)\b)?`)
)

// EntryChange is what happened to the test file's entry in BACKEND_ENUMERATION_TODO.
type EntryChange string

// The entry changes a Report can show.
const (
	EntryRemoved   EntryChange = "removed"
	EntryRecorded  EntryChange = "comment rewritten"
	EntryUnchanged EntryChange = "unchanged"
	EntryAbsent    EntryChange = "absent"
)

// setItem is one line inside the set literal.
type setItem struct {
	kind    byte // 'b' blank, 'c' comment, 'e' entry
	value   string
	comment string // an entry's trailing comment, with its '#'
}

// setLiteral is the parsed BACKEND_ENUMERATION_TODO assignment.
type setLiteral struct {
	assign, close int // line indexes; close == assign for a one-line literal
	head          string
	oneLine       bool
	entries       []string
	items         map[int]setItem // by line index, multi-line literals only
}

type checkerPlan struct {
	out           string
	entry         EntryChange
	entriesBefore int
	entriesAfter  int
	blockChanges  []string
}

func (p checkerPlan) changes() []string {
	var c []string
	switch p.entry {
	case EntryRemoved:
		if p.entriesAfter == 0 {
			c = append(c, fmt.Sprintf("`%s` entry removed; the set is now empty (`set()`)", RustPath))
		} else {
			c = append(c, fmt.Sprintf("`%s` entry removed (entries: %d -> %d)", RustPath, p.entriesBefore, p.entriesAfter))
		}
	case EntryRecorded:
		c = append(c, fmt.Sprintf("the comment of the `%s` entry now records the ROCm failure", RustPath))
	}
	return append(c, p.blockChanges...)
}

func parseSet(ls []line, ps *problems) (setLiteral, bool) {
	var found []int
	for i, l := range ls {
		if strings.HasPrefix(strings.TrimLeft(l.text, " \t"), "#") {
			continue
		}
		if assignment.MatchString(l.text) {
			found = append(found, i)
		}
	}
	if len(found) == 0 {
		ps.add(0, "no `%s: set[str] = {...}` literal found; expected the set of files rule 4 still skips", setName)
		return setLiteral{}, false
	}
	if len(found) > 1 {
		ps.add(found[1]+1, "%s is assigned %d times (first at line %d); expected one literal", setName, len(found), found[0]+1)
		return setLiteral{}, false
	}
	a := found[0]
	m := assignment.FindStringSubmatch(ls[a].text)
	rhs := m[2]
	lit := setLiteral{assign: a, close: a, head: ls[a].text[:len(ls[a].text)-len(rhs)]}
	switch {
	case emptySet.MatchString(rhs):
		lit.oneLine = true
		return lit, true
	case strings.HasPrefix(rhs, "{") && strings.Contains(rhs, "}"):
		inner := rhs[1:strings.LastIndex(rhs, "}")]
		if strings.TrimSpace(inner) == "" {
			ps.add(a+1, "%s is `{}`, which Python reads as an empty dict: write `set()`", setName)
			return setLiteral{}, false
		}
		lit.oneLine = true
		for _, q := range quoted.FindAllStringSubmatch(inner, -1) {
			lit.entries = append(lit.entries, q[1]+q[2])
		}
		return lit, true
	case !openBrace.MatchString(rhs):
		ps.add(a+1, "%s is not a set literal: found %s", setName, quote(ls[a].text))
		return setLiteral{}, false
	}
	lit.items = map[int]setItem{}
	for i := a + 1; i < len(ls); i++ {
		t := ls[i].text
		trimmed := strings.TrimSpace(t)
		switch {
		case closeBrace.MatchString(t):
			lit.close = i
			return lit, true
		case trimmed == "":
			lit.items[i] = setItem{kind: 'b'}
		case strings.HasPrefix(trimmed, "#"):
			lit.items[i] = setItem{kind: 'c'}
		default:
			e := setEntry.FindStringSubmatch(t)
			if e == nil {
				ps.add(i+1, "inside %s, expected one quoted path per line (or a comment): found %s", setName, quote(t))
				return setLiteral{}, false
			}
			lit.items[i] = setItem{kind: 'e', value: e[2] + e[3], comment: e[6]}
			lit.entries = append(lit.entries, e[2]+e[3])
		}
	}
	ps.add(a+1, "%s opens `{` but no line closes it with `}`", setName)
	return setLiteral{}, false
}

// commentStyle tells where this literal puts an entry's comment: 'b' on the lines
// before the entry, 'a' on the lines after it, 'i' inline after the entry.
func (s setLiteral) commentStyle() byte {
	for i := s.assign + 1; i < s.close; i++ {
		switch it := s.items[i]; it.kind {
		case 'c':
			return 'b'
		case 'e':
			if it.comment != "" {
				return 'i'
			}
			return 'a'
		}
	}
	return 'b'
}

// entryComment returns the comment lines [from, to) that belong to the entry at e.
func (s setLiteral) entryComment(e int) (from, to int) {
	switch s.commentStyle() {
	case 'b':
		from = e
		for from-1 > s.assign && s.items[from-1].kind == 'c' {
			from--
		}
		return from, e
	case 'a':
		to = e + 1
		for to < s.close && s.items[to].kind == 'c' {
			to++
		}
		return e + 1, to
	}
	return e, e
}

// planChecker checks the checker script and computes its patched text. needEntry
// says the test file's entry must be there (the gates still enumerate Metal and CUDA,
// or a failure is to be recorded).
func planChecker(src string, d Decision, o Outcome, needEntry bool) (checkerPlan, []Problem) {
	ps := &problems{path: CheckerPath}
	ls := splitLines(src)
	plan := checkerPlan{out: src, entry: EntryUnchanged}
	lit, ok := parseSet(ls, ps)
	if !ok {
		return plan, ps.list
	}
	plan.entriesBefore = len(lit.entries)
	plan.entriesAfter = plan.entriesBefore
	var at []int
	for i := lit.assign; i <= lit.close; i++ {
		if it, ok := lit.items[i]; ok && it.kind == 'e' && it.value == RustPath {
			at = append(at, i)
		}
	}
	n := 0
	for _, e := range lit.entries {
		if e == RustPath {
			n++
		}
	}
	switch {
	case n == 0:
		plan.entry = EntryAbsent
		if needEntry {
			ps.add(lit.assign+1, "%s has no entry %q although the gates still enumerate Metal and CUDA (entries: %s); add the entry back by hand", setName, RustPath, listOrNone(lit.entries))
		}
		return plan, ps.list
	case n > 1:
		ps.add(lit.assign+1, "%s lists %q %d times; expected once", setName, RustPath, n)
		return plan, ps.list
	case lit.oneLine && d != Hold:
		ps.add(lit.assign+1, "%s is written on one line; perfbot edits one entry per line with its comment: put each entry on its own line", setName)
		return plan, ps.list
	}
	if d == Hold {
		return plan, nil
	}
	e := at[0]
	var out []line
	switch d {
	case Switch:
		out = removeEntry(ls, lit, e, &plan, ps)
	case Record:
		out = recordFailure(ls, lit, e, o)
		if joinLines(out) != src {
			plan.entry = EntryRecorded
		}
	}
	if len(ps.list) > 0 {
		return plan, ps.list
	}
	plan.out = joinLines(out)
	return plan, nil
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// removeEntry drops the entry and its comment, keeps the comment block above the
// literal true, and turns an emptied literal into set().
func removeEntry(ls []line, lit setLiteral, e int, plan *checkerPlan, ps *problems) []line {
	plan.entry = EntryRemoved
	plan.entriesAfter = plan.entriesBefore - 1

	out := append([]line(nil), ls...)
	// Work bottom-up so earlier indexes stay valid: the literal, then the block.
	if plan.entriesAfter == 0 {
		out = emptyLiteral(out, lit)
	} else {
		from, to := lit.entryComment(e)
		from, to = min(from, e), max(to, e+1)
		prevBlank := from-1 > lit.assign && lit.items[from-1].kind == 'b'
		nextBlank := to < lit.close && lit.items[to].kind == 'b'
		switch {
		case nextBlank && (prevBlank || from-1 == lit.assign):
			to++
		case prevBlank && to == lit.close:
			from--
		}
		out = splice(out, from, to)
	}
	return fixCommentBlock(out, lit.assign, plan, ps)
}

// emptyLiteral rewrites the whole literal as `set()`, keeping comments that belonged
// to no entry above the assignment.
func emptyLiteral(ls []line, lit setLiteral) []line {
	keep := map[int]bool{}
	for i, it := range lit.items {
		if it.kind == 'c' {
			keep[i] = true
		}
	}
	for i, it := range lit.items {
		if it.kind == 'e' {
			from, to := lit.entryComment(i)
			for k := from; k < to; k++ {
				delete(keep, k)
			}
		}
	}
	indent := indentOf(ls[lit.assign].text)
	var repl []line
	for i := lit.assign + 1; i < lit.close; i++ {
		if keep[i] {
			repl = append(repl, line{text: indent + strings.TrimLeft(ls[i].text, " \t"), eol: ls[i].eol})
		}
	}
	tail := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ls[lit.close].text), "}"))
	if tail == "" {
		tail = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ls[lit.assign].text[len(lit.head):]), "{"))
	}
	text := lit.head + "set()"
	if tail != "" {
		text += "  " + tail
	}
	repl = append(repl, line{text: text, eol: ls[lit.close].eol})
	return splice(ls, lit.assign, lit.close+1, repl...)
}

// fixCommentBlock keeps the comment block right above the assignment true once the
// entry is gone: list lines naming the file go, and a count equal to the old number
// of entries becomes the new one. A mention in prose it cannot fix is a problem.
func fixCommentBlock(ls []line, assign int, plan *checkerPlan, ps *problems) []line {
	// After emptyLiteral moved orphan comments above the assignment, find it again.
	for i := assign; i < len(ls); i++ {
		if assignment.MatchString(ls[i].text) && !strings.HasPrefix(strings.TrimSpace(ls[i].text), "#") {
			assign = i
			break
		}
	}
	start := assign
	for start > 0 && strings.HasPrefix(strings.TrimSpace(ls[start-1].text), "#") {
		start--
	}
	base := path.Base(RustPath)
	out := append([]line(nil), ls[:start]...)
	removed := 0
	counted := false
	for i := start; i < assign; i++ {
		t := strings.TrimSpace(ls[i].text)
		if strings.Contains(t, base) {
			m := listItem.FindStringSubmatch(t)
			body := strings.TrimLeft(m[2], "`'\"")
			bulleted := len(t)-len(m[2]) > 1+len(m[1])
			// A list line is a bullet naming the file, or a line starting with its
			// full path; anything else is prose perfbot cannot reword.
			if !strings.HasPrefix(body, RustPath) && !(bulleted && strings.HasPrefix(body, base)) {
				ps.add(i+1, "the comment above %s mentions %s in prose, which would no longer be true: found %s; reword it (or make it a list line perfbot can drop)", setName, base, quote(t))
				continue
			}
			// Drop the item and its continuation lines: deeper than a plain item's
			// text, or aligned with a bulleted item's text.
			bodyCol := len(t) - len(m[2])
			removed++
			for i+1 < assign {
				next := strings.TrimSpace(ls[i+1].text)
				rest := strings.TrimLeft(next[1:], " \t")
				col := len(next) - len(rest)
				if rest == "" || col < bodyCol || (!bulleted && col == bodyCol) || listItem.FindStringSubmatch(next)[2] != rest {
					break
				}
				i++
			}
			continue
		}
		l := ls[i]
		l.text = countPhrase.ReplaceAllStringFunc(l.text, func(s string) string {
			r, ok := recount(s, plan.entriesBefore, plan.entriesAfter)
			if ok {
				counted = true
			}
			return r
		})
		out = append(out, l)
	}
	if counted {
		plan.blockChanges = append(plan.blockChanges, fmt.Sprintf("the count in the comment above the set now says %d", plan.entriesAfter))
	}
	if removed > 0 {
		plan.blockChanges = append(plan.blockChanges, "the list in the comment above the set no longer names the file")
	}
	return append(out, ls[assign:]...)
}

var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}

// recount rewrites a "<N> <noun> [still] <verb>" phrase whose N is the old count.
func recount(s string, before, after int) (string, bool) {
	m := countPhrase.FindStringSubmatch(s)
	num, sp, noun, vsp, still, verb := m[1], m[2], m[3], m[4], m[5], m[6]
	value, isDigit := -1, true
	if v, err := strconv.Atoi(num); err == nil {
		value = v
	} else {
		isDigit = false
		for k, w := range numberWords {
			if strings.EqualFold(w, num) {
				value = k
			}
		}
	}
	if value != before {
		return s, false
	}
	newNum := strconv.Itoa(after)
	if !isDigit && after < len(numberWords) {
		newNum = numberWords[after]
		if unicode0IsUpper(num) {
			newNum = strings.ToUpper(newNum[:1]) + newNum[1:]
		}
	}
	singular := after == 1
	noun = inflectNoun(noun, singular)
	out := newNum + sp + noun
	if verb != "" {
		out += vsp + still + inflectVerb(verb, singular)
	}
	return out, true
}

func unicode0IsUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

func inflectNoun(noun string, singular bool) string {
	l := strings.ToLower(noun)
	stem := strings.TrimSuffix(l, "s")
	if l == "entries" || l == "entry" {
		stem = "entry"
	}
	out := stem
	if !singular {
		if stem == "entry" {
			out = "entries"
		} else {
			out = stem + "s"
		}
	}
	if unicode0IsUpper(noun) {
		out = strings.ToUpper(out[:1]) + out[1:]
	}
	return out
}

func inflectVerb(verb string, singular bool) string {
	pairs := map[string][2]string{ // plural, singular
		"is": {"are", "is"}, "are": {"are", "is"},
		"has": {"have", "has"}, "have": {"have", "has"},
	}
	l := strings.ToLower(verb)
	p, ok := pairs[l]
	if !ok {
		stem := strings.TrimSuffix(l, "s")
		p = [2]string{stem, stem + "s"}
	}
	if singular {
		return p[1]
	}
	return p[0]
}

// recordFailure rewrites the entry's comment to record the ROCm failures.
func recordFailure(ls []line, lit setLiteral, e int, o Outcome) []line {
	style := lit.commentStyle()
	from, to := lit.entryComment(e)
	old := lit.items[e].comment
	for i := from; i < to; i++ {
		old += " " + ls[i].text
	}
	pred := "gpu_backend_available"
	if m := predicate.FindStringSubmatch(old); m != nil {
		pred = m[1]
	}
	head := fmt.Sprintf("waits for %s(); on ROCm at overlay %s:", pred, o.OverlayCommit)
	var fails []string
	for _, t := range o.inFileOrder() {
		if !recorded(t.Outcome) {
			continue
		}
		f := t.Name + " " + words(t.Outcome)
		// The thread name repeats the test name; the panic location and message matter.
		if d := oneLine(threadPrefix.ReplaceAllString(t.Detail, ""), 200); d != "" {
			f += ": " + d
		}
		fails = append(fails, f)
	}
	out := append([]line(nil), ls...)
	if style == 'i' {
		l := out[e]
		entry := setEntry.FindStringSubmatch(l.text)
		code := l.text
		gap := "  "
		if entry[6] != "" {
			code = strings.TrimSuffix(l.text, entry[6])
			code = strings.TrimRight(code, " \t")
			if entry[5] != "" {
				gap = entry[5]
			}
		}
		l.text = code + gap + "# " + head + " " + strings.Join(fails, "; ")
		out[e] = l
		return out
	}
	indent := indentOf(ls[e].text)
	if from < to {
		indent = indentOf(ls[from].text)
	}
	eol := ls[e].eol
	if eol == "" {
		eol = newline(ls)
	}
	repl := []line{{text: indent + "# " + head, eol: eol}}
	for _, f := range fails {
		repl = append(repl, line{text: indent + "#   " + f, eol: eol})
	}
	if style == 'a' && from == to {
		from, to = e+1, e+1
	}
	return splice(out, from, to, repl...)
}
