// Command mutsum reads the JSON reports gremlins writes, one per package, and prints
// every mutant the tests did not notice as file:line, one line per package, and last
// the total: `mutation: K of N killed (P %), S survived`. bench/mutation.sh runs it.
//
// N counts the mutants the tests ran against. One is killed when a test failed
// (KILLED) or the tests ran past their deadline (TIMED OUT, listed too: a broken
// behaviour should fail a test, not hang it); it survived when the tests passed
// (LIVED). Mutants gremlins finds no covering test for (NOT COVERED) are listed and
// counted per package but left out of N: Go's coverage blocks do not include switch
// case expressions or package-level initializers, so gremlins reports those as not
// covered however many tests run them. Mutants that do not compile (NOT VIABLE) are no
// change at all and are left out.
//
// Usage: mutsum [-min PCT] PKG=REPORT.json...; with -min, it exits 1 when the total
// share killed is below PCT. Several reports of one package (a run in parts) add up.
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

// report is the part of gremlins' JSON output (its -o file) that is read.
type report struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// mutant is one mutation of one package, its file named from the module root.
type mutant struct {
	File   string
	Line   int
	Column int
	Type   string
	Status string
}

// tally counts the mutants of a package or of the whole run.
type tally struct {
	Killed, TimedOut, Lived, NotCovered int
}

func (t tally) killed() int   { return t.Killed + t.TimedOut }
func (t tally) survived() int { return t.Lived }
func (t tally) total() int    { return t.killed() + t.survived() }

// pct is the share killed; a package with no mutants has nothing left alive.
func (t tally) pct() float64 {
	if t.total() == 0 {
		return 100
	}
	return 100 * float64(t.killed()) / float64(t.total())
}

func (t tally) String() string {
	return fmt.Sprintf("%d of %d killed (%.1f %%), %d survived", t.killed(), t.total(), t.pct(), t.survived())
}

func (t *tally) add(status string) {
	switch status {
	case "KILLED":
		t.Killed++
	case "TIMED OUT":
		t.TimedOut++
	case "LIVED":
		t.Lived++
	case "NOT COVERED":
		t.NotCovered++
	}
}

// readReport reads one gremlins report; its file names are relative to pkg.
func readReport(pkg string, r io.Reader) ([]mutant, error) {
	var rep report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("reading the gremlins report of %s: %w", pkg, err)
	}
	var out []mutant
	for _, f := range rep.Files {
		for _, m := range f.Mutations {
			out = append(out, mutant{File: path.Join(pkg, f.Name), Line: m.Line, Column: m.Column, Type: m.Type, Status: m.Status})
		}
	}
	slices.SortFunc(out, func(a, b mutant) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Type, b.Type))
	})
	return out, nil
}

// addReport adds one report's mutants to their package. A package run in parts
// (bench/mutation.sh's MUTATION_SPLIT) has a report per part: they add up to one
// package, its mutants in file order.
func addReport(pkgs []string, mutants map[string][]mutant, pkg string, ms []mutant) []string {
	if _, seen := mutants[pkg]; !seen {
		pkgs = append(pkgs, pkg)
	}
	all := append(mutants[pkg], ms...)
	slices.SortFunc(all, func(a, b mutant) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Type, b.Type))
	})
	mutants[pkg] = all
	return pkgs
}

// summarize writes the survivors and timeouts of each package, a line per package and
// the total last, and returns the total.
func summarize(w io.Writer, pkgs []string, mutants map[string][]mutant) tally {
	var all tally
	for _, pkg := range pkgs {
		var t tally
		for _, m := range mutants[pkg] {
			t.add(m.Status)
			switch m.Status {
			case "LIVED", "NOT COVERED", "TIMED OUT":
				fmt.Fprintf(w, "%-12s %s:%d:%d %s\n", strings.ToLower(m.Status), m.File, m.Line, m.Column, m.Type)
			}
		}
		all.Killed += t.Killed
		all.TimedOut += t.TimedOut
		all.Lived += t.Lived
		all.NotCovered += t.NotCovered
		fmt.Fprintf(w, "%s: %v (%d timed out; %d not covered)\n", pkg, t, t.TimedOut, t.NotCovered)
	}
	fmt.Fprintf(w, "mutation: %v\n", all)
	return all
}

func main() {
	minPct := flag.Float64("min", 0, "exit 1 when the total share killed is below this percentage")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mutsum [-min PCT] PKG=REPORT.json...")
		os.Exit(2)
	}
	var pkgs []string
	mutants := map[string][]mutant{}
	for _, arg := range flag.Args() {
		pkg, file, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "mutsum: %q is not PKG=REPORT.json\n", arg)
			os.Exit(2)
		}
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mutsum: %v\n", err)
			os.Exit(1)
		}
		ms, err := readReport(pkg, f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "mutsum: %v\n", err)
			os.Exit(1)
		}
		pkgs = addReport(pkgs, mutants, pkg, ms)
	}
	if all := summarize(os.Stdout, pkgs, mutants); all.pct() < *minPct {
		fmt.Fprintf(os.Stderr, "mutsum: %.1f %% of the mutants killed, below the threshold of %.1f %%\n", all.pct(), *minPct)
		os.Exit(1)
	}
}
