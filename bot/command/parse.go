package command

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/results"
)

// MaxLines bounds the command lines Lines returns.
const MaxLines = 16

// Lines finds the command lines of body without reading their values: the cheap test a
// caller makes before it loads the config (no lines: the comment is not for perfbot),
// and what tells an edit that changed the command from one that did not. It returns the
// first MaxLines lines as written and how many there are. A body over MaxBodyBytes is
// read up to that bound.
func Lines(body string) (lines []string, total int) {
	if len(body) > MaxBodyBytes {
		body = body[:MaxBodyBytes]
	}
	found, total := scan(body, Verbs(), MaxLines)
	for _, l := range found {
		lines = append(lines, l.text)
	}
	return lines, total
}

// Parse finds the one command in a comment body and checks its values against cfg, the
// config of the repository's default branch. found is false when the body holds no
// command (the comment is not for perfbot: ignore it, do not answer). Otherwise err, an
// *Error, says what is wrong with the command and what is valid.
func Parse(body string, cfg config.Config) (cmd Command, found bool, err error) {
	tooLong := len(body) > MaxBodyBytes
	if tooLong {
		body = body[:MaxBodyBytes]
	}
	lines, total := scan(body, Verbs(), 2)
	switch {
	case total == 0:
		return Command{}, false, nil
	case tooLong:
		return Command{}, true, &Error{Line: lines[0].n, Text: lines[0].text,
			Problem: fmt.Sprintf("the comment is longer than %d bytes; perfbot reads commands only from shorter comments", MaxBodyBytes),
			Usage:   usages()}
	case total > 1:
		return Command{}, true, &Error{Line: lines[1].n, Text: lines[1].text,
			Problem: fmt.Sprintf("one command per comment: this comment has %d (lines %d and %d%s); post each in its own comment",
				total, lines[0].n, lines[1].n, more(total)),
			Usage: usages()}
	}
	cmd, perr := parseLine(lines[0], cfg)
	if perr != nil {
		return Command{}, true, perr
	}
	return cmd, true, nil
}

func more(total int) string {
	if total > 2 {
		return ", and more"
	}
	return ""
}

func usages() []string {
	var u []string
	for _, s := range Specs() {
		u = append(u, s.Usage())
	}
	return u
}

// parseLine reads one command line.
func parseLine(l line, cfg config.Config) (Command, *Error) {
	fail := func(problem string, valid []string, usage []string) (Command, *Error) {
		return Command{}, &Error{Line: l.n, Text: l.text, Problem: problem, Valid: valid, Usage: usage}
	}
	if len(l.text) > MaxLineBytes {
		return fail(fmt.Sprintf("the command line is %d bytes long; perfbot reads at most %d", len(l.text), MaxLineBytes), nil, usages())
	}
	words := strings.Fields(l.text)
	verb := words[0]
	var specs []Spec
	for _, s := range Specs() {
		if s.Words[0] == verb {
			specs = append(specs, s)
		}
	}
	var seconds []string
	for _, s := range specs {
		if !slices.Contains(seconds, s.Words[1]) {
			seconds = append(seconds, s.Words[1])
		}
	}
	if len(words) < 2 {
		return fail(fmt.Sprintf("%s needs one of %s", verb, strings.Join(seconds, ", ")), seconds, usagesOf(specs))
	}
	// The row whose fixed words start the line, the longest of them: /bench rocm
	// compare is the compare row, /bench rocm models=x the plain one.
	var spec *Spec
	for i := range specs {
		w := specs[i].Words
		if len(w) <= len(words) && slices.Equal(w, words[:len(w)]) && (spec == nil || len(w) > len(spec.Words)) {
			spec = &specs[i]
		}
	}
	if spec == nil {
		what := "subcommand"
		if verb != "/perfbot" {
			what = "backend"
		}
		return fail(fmt.Sprintf("unknown %s %s after %s", what, quote(words[1]), verb), seconds, usagesOf(specs))
	}
	cmd := Command{Kind: spec.Kind, Compare: spec.Compare, Line: l.n, Text: l.text}
	if verb != "/perfbot" {
		cmd.Backend = words[1]
	}
	seen := map[string]bool{}
	for _, w := range words[len(spec.Words):] {
		key, val, hasEq := strings.Cut(w, "=")
		if !hasEq {
			key, val = "", w
		}
		var arg *Arg
		for i := range spec.Args {
			if spec.Args[i].Key == key {
				arg = &spec.Args[i]
			}
		}
		if arg == nil {
			if len(spec.Args) == 0 {
				return fail(fmt.Sprintf("%s takes no arguments, not %s", spec.Usage(), quote(w)), nil, []string{spec.Usage()})
			}
			what := "unknown argument " + quote(w)
			if hasEq {
				what = "unknown argument " + quote(key+"=")
			}
			what += " for " + strings.Join(spec.Words, " ")
			if w == "compare" && !spec.Compare && hasCompareForm(*spec) {
				what += " (the compare form starts " + strings.Join(spec.Words, " ") + " compare, before any argument)"
			}
			if w == "bisect" && hasForm(*spec, Bisect) {
				what += " (a bisection starts " + strings.Join(spec.Words, " ") + " bisect, before any argument)"
			}
			return fail(what, synopses(spec.Args), []string{spec.Usage()})
		}
		name := arg.Synopsis()
		if seen[name] {
			return fail(fmt.Sprintf("%s is given twice; give it once", name), nil, []string{spec.Usage()})
		}
		seen[name] = true
		if e := arg.parse(&cmd, val, cfg); e != nil {
			e.Line, e.Text = l.n, l.text
			if e.Usage == nil {
				e.Usage = []string{spec.Usage()}
			}
			return Command{}, e
		}
	}
	var missing []string
	for _, a := range spec.Args {
		if a.Required && !seen[a.Synopsis()] {
			missing = append(missing, a.Synopsis())
		}
	}
	if len(missing) > 0 {
		return fail(fmt.Sprintf("%s needs %s", strings.Join(spec.Words, " "), strings.Join(missing, " and ")), synopses(spec.Args), []string{spec.Usage()})
	}
	if cmd.Kind == Bisect {
		if cmd.Good == cmd.Bad {
			return fail(fmt.Sprintf("good= and bad= name the same commit, %s: a bisection needs a range, the last good commit before the first bad one", cmd.Good), nil, []string{spec.Usage()})
		}
		if !cmd.ModelsGiven {
			cmd.Models = firstModel(cfg)
		}
	}
	if cmd.Kind == Profile || cmd.Compare {
		if !cmd.ModelsGiven {
			cmd.Models = append([]string(nil), cfg.DefaultModels...)
			if len(cmd.Models) == 0 {
				cmd.Models = modelNames(cfg)
			}
		}
	}
	if cmd.Kind == Profile && !cmd.SamplingGiven {
		cmd.Sampling = append([]string(nil), cfg.SamplingTags...)
		if len(cmd.Sampling) == 0 {
			cmd.Sampling = []string{results.Greedy.Tag()}
		}
	}
	if cmd.Compare && !cmd.RepeatsGiven {
		cmd.Repeats = maxRepeats(cfg)
	}
	return cmd, nil
}

// hasForm reports whether a row of kind extends s's words by one: /bench rocm bisect
// beside /bench rocm.
func hasForm(s Spec, kind Kind) bool {
	for _, o := range Specs() {
		if o.Kind == kind && len(o.Words) == len(s.Words)+1 && slices.Equal(o.Words[:len(s.Words)], s.Words) {
			return true
		}
	}
	return false
}

// hasCompareForm reports whether s has a compare row beside it.
func hasCompareForm(s Spec) bool {
	for _, o := range Specs() {
		if o.Compare && o.Kind == s.Kind && slices.Equal(o.Words[:len(o.Words)-1], s.Words) {
			return true
		}
	}
	return false
}

func usagesOf(specs []Spec) []string {
	var u []string
	for _, s := range specs {
		u = append(u, s.Usage())
	}
	return u
}

func synopses(args []Arg) []string {
	var s []string
	for _, a := range args {
		s = append(s, a.Synopsis())
	}
	return s
}

// list splits a comma-separated value, refusing empty items.
func list(key, v string) ([]string, *Error) {
	items := strings.Split(v, ",")
	for _, it := range items {
		if it == "" {
			return nil, &Error{Problem: fmt.Sprintf("%s=%s has an empty item; separate names with single commas, no spaces", key, clip(v, maxQuote))}
		}
	}
	return items, nil
}

func parseModels(cmd *Command, v string, cfg config.Config) *Error {
	names := modelNames(cfg)
	items, e := list("models", v)
	if e != nil {
		e.Valid = names
		return e
	}
	if max := maxModels(cfg); len(items) > max {
		return &Error{Problem: fmt.Sprintf("models= names %d models; one request runs at most %d (limits.max_models)", len(items), max), Valid: names}
	}
	seen := map[string]bool{}
	for _, it := range items {
		if _, ok := cfg.Model(it); !ok {
			return &Error{Problem: fmt.Sprintf("unknown model %s; the models are those of the default branch's %s", quote(it), config.DefaultPath), Valid: names}
		}
		if seen[it] {
			return &Error{Problem: fmt.Sprintf("model %s is named twice", quote(it)), Valid: names}
		}
		seen[it] = true
	}
	cmd.Models, cmd.ModelsGiven = items, true
	return nil
}

// MaxTemperature is the highest temperature a sampling tag may ask for.
const MaxTemperature = 2.0

var samplingValid = []string{"greedy", "t<T>", "t<T>-p<P>"}

func parseSampling(cmd *Command, v string, _ config.Config) *Error {
	items, e := list("sampling", v)
	if e != nil {
		e.Valid = samplingValid
		return e
	}
	if len(items) > MaxSampling {
		return &Error{Problem: fmt.Sprintf("sampling= names %d settings; one request runs at most %d", len(items), MaxSampling), Valid: samplingValid}
	}
	seen := map[string]bool{}
	var tags []string
	for _, it := range items {
		s, err := results.ParseSampling(it)
		if err != nil {
			return &Error{Problem: clip(err.Error(), 2*maxQuote), Valid: samplingValid}
		}
		if s.Temperature > MaxTemperature {
			return &Error{Problem: fmt.Sprintf("sampling %s: temperature must be in [0, %g]", quote(it), MaxTemperature), Valid: samplingValid}
		}
		tag := s.Tag()
		if seen[tag] {
			return &Error{Problem: fmt.Sprintf("sampling %s is the same setting as an earlier one (%s); give each once", quote(it), tag), Valid: samplingValid}
		}
		seen[tag] = true
		tags = append(tags, tag)
	}
	cmd.Sampling, cmd.SamplingGiven = tags, true
	return nil
}

var refValid = []string{"a SHA of 7 to 40 hex digits", "a branch of this repository"}

func parseRef(cmd *Command, v string, _ config.Config) *Error {
	ref, kind, e := refOf("ref", v)
	if e != nil {
		return e
	}
	cmd.Ref, cmd.RefKind = ref, kind
	return nil
}

func parseBase(cmd *Command, v string, _ config.Config) *Error {
	ref, kind, e := refOf("base", v)
	if e != nil {
		return e
	}
	cmd.Base, cmd.BaseKind = ref, kind
	return nil
}

var shaValid = []string{"a SHA of 7 to 40 hex digits"}

// shaOf reads the value of good= or bad=: a commit SHA only, lower-cased. A bisection
// is of fixed commits: a branch moves.
func shaOf(key, v string) (string, *Error) {
	switch {
	case isHex(v) && len(v) >= 7 && len(v) <= FullSHALen:
		return strings.ToLower(v), nil
	case v == "":
		return "", &Error{Problem: fmt.Sprintf("%s= is empty; give a commit SHA, like %s=9fceb02", key, key), Valid: shaValid}
	case isHex(v) && len(v) < 7:
		return "", &Error{Problem: fmt.Sprintf("%s=%s is too short for a SHA; give at least 7 hex digits", key, v), Valid: shaValid}
	case isHex(v):
		return "", &Error{Problem: fmt.Sprintf("%s= has %d hex digits; a SHA has at most %d", key, len(v), FullSHALen), Valid: shaValid}
	}
	return "", &Error{Problem: fmt.Sprintf("%s=%s is not a commit SHA; a bisection names its commits by SHA (7 to 40 hex digits), not by branch", key, quote(v)), Valid: shaValid}
}

func parseGood(cmd *Command, v string, _ config.Config) *Error {
	sha, e := shaOf("good", v)
	cmd.Good = sha
	return e
}

func parseBad(cmd *Command, v string, _ config.Config) *Error {
	sha, e := shaOf("bad", v)
	cmd.Bad = sha
	return e
}

// parseOneModel reads models= of a bisection: one configured model.
func parseOneModel(cmd *Command, v string, cfg config.Config) *Error {
	names := modelNames(cfg)
	items, e := list("models", v)
	if e != nil {
		e.Valid = names
		return e
	}
	if len(items) > 1 {
		return &Error{Problem: fmt.Sprintf("models= names %d models; a bisection measures one model: post one command per model", len(items)), Valid: names}
	}
	if _, ok := cfg.Model(items[0]); !ok {
		return &Error{Problem: fmt.Sprintf("unknown model %s; the models are those of the default branch's %s", quote(items[0]), config.DefaultPath), Valid: names}
	}
	cmd.Models, cmd.ModelsGiven = items, true
	return nil
}

// refOf reads the value of ref= or base=: a SHA of 7 to 40 hex digits (lower-cased) or
// a branch name.
func refOf(key, v string) (string, RefKind, *Error) {
	if isHex(v) && len(v) >= 7 && len(v) <= FullSHALen {
		return strings.ToLower(v), RefSHA, nil
	}
	if isHex(v) && len(v) > 0 && len(v) < 7 {
		return "", RefNone, &Error{Problem: fmt.Sprintf("%s=%s is too short for a SHA; give at least 7 hex digits", key, v), Valid: refValid}
	}
	if len(v) > 255 {
		return "", RefNone, &Error{Problem: fmt.Sprintf("%s= is %d bytes long; a branch name has at most 255", key, len(v)), Valid: refValid}
	}
	if why := config.CheckBranch(v); why != "" {
		return "", RefNone, &Error{Problem: key + "=" + clip(why, 2*maxQuote), Valid: refValid}
	}
	return v, RefBranch, nil
}

// parseRepeats reads repeats=N: a whole number from MinRepeats to the config's
// limits.max_repeats.
func parseRepeats(cmd *Command, v string, cfg config.Config) *Error {
	lo, hi := MinRepeats, maxRepeats(cfg)
	valid := []string{fmt.Sprintf("a whole number from %d to %d", lo, hi)}
	n, err := strconv.Atoi(v)
	if err != nil || v != strconv.Itoa(n) {
		return &Error{Problem: fmt.Sprintf("repeats=%s is not a whole number; give the most runs per side, %d to %d, like repeats=%d", quote(v), lo, hi, hi), Valid: valid}
	}
	if n < lo || n > hi {
		return &Error{Problem: fmt.Sprintf("repeats=%d is out of range: a compare runs %d to %d repeats per side (each side starts with %d; the most is limits.max_repeats of the config, %d)", n, lo, hi, lo, hi), Valid: valid}
	}
	cmd.Repeats, cmd.RepeatsGiven = n, true
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// MaxIssue bounds epic=: GitHub's issue numbers are 32-bit.
const MaxIssue = 1<<31 - 1

func parseEpic(cmd *Command, v string, _ config.Config) *Error {
	s := strings.TrimPrefix(v, "#")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxIssue || s != strconv.Itoa(n) {
		return &Error{Problem: fmt.Sprintf("epic=%s is not an issue number; give a positive number like epic=12", quote(v)), Valid: []string{"a positive issue number"}}
	}
	cmd.Epic = n
	return nil
}

func parseID(cmd *Command, v string, _ config.Config) *Error {
	ok := v != "" && len(v) <= MaxIDLen
	for i := 0; ok && i < len(v); i++ {
		c := v[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
	}
	if !ok {
		return &Error{Problem: fmt.Sprintf("%s is not a request id", quote(v)),
			Valid: []string{fmt.Sprintf("letters, digits, -, _ and ., at most %d", MaxIDLen)}}
	}
	cmd.ID = v
	return nil
}

// maxQuote bounds how much of a bad value an error quotes back.
const maxQuote = 80

// quote quotes a value taken from the comment, shortened: an error names the bad part,
// it does not echo a whole line back.
func quote(v string) string { return strconv.Quote(clip(v, maxQuote)) }
