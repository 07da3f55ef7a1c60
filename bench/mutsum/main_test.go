package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	const rep = `{"files":[
	{"file_name":"b.go","mutations":[
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":9,"column":3},
		{"type":"ARITHMETIC_BASE","status":"KILLED","line":2,"column":1}]},
	{"file_name":"a.go","mutations":[
		{"type":"CONDITIONALS_NEGATION","status":"TIMED OUT","line":4,"column":2},
		{"type":"INCREMENT_DECREMENT","status":"NOT COVERED","line":5,"column":7},
		{"type":"INCREMENT_DECREMENT","status":"NOT VIABLE","line":6,"column":7},
		{"type":"CONDITIONALS_NEGATION","status":"KILLED","line":1,"column":1}]}]}`
	ms, err := readReport("runner/x", strings.NewReader(rep))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	all := summarize(&b, []string{"runner/x", "empty"}, map[string][]mutant{"runner/x": ms})
	want := `timed out    runner/x/a.go:4:2 CONDITIONALS_NEGATION
not covered  runner/x/a.go:5:7 INCREMENT_DECREMENT
lived        runner/x/b.go:9:3 CONDITIONALS_BOUNDARY
runner/x: 3 of 4 killed (75.0 %), 1 survived (1 timed out; 1 not covered)
empty: 0 of 0 killed (100.0 %), 0 survived (0 timed out; 0 not covered)
mutation: 3 of 4 killed (75.0 %), 1 survived
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if all.pct() != 75 {
		t.Errorf("total %v %%, want 75", all.pct())
	}
	if _, err := readReport("p", strings.NewReader("{")); err == nil {
		t.Error("a damaged report was read")
	}
}

// Reports of the parts of one package add up to one package line.
func TestAddReportParts(t *testing.T) {
	t.Parallel()
	part := func(file, status string) []mutant {
		ms, err := readReport("runner/x", strings.NewReader(`{"files":[{"file_name":"`+file+`","mutations":[{"type":"CONDITIONALS_BOUNDARY","status":"`+status+`","line":1,"column":1}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	mutants := map[string][]mutant{}
	var pkgs []string
	pkgs = addReport(pkgs, mutants, "runner/x", part("b.go", "LIVED"))
	pkgs = addReport(pkgs, mutants, "runner/y", part("c.go", "KILLED"))
	pkgs = addReport(pkgs, mutants, "runner/x", part("a.go", "KILLED"))
	var b strings.Builder
	summarize(&b, pkgs, mutants)
	want := `lived        runner/x/b.go:1:1 CONDITIONALS_BOUNDARY
runner/x: 1 of 2 killed (50.0 %), 1 survived (0 timed out; 0 not covered)
runner/y: 1 of 1 killed (100.0 %), 0 survived (0 timed out; 0 not covered)
mutation: 2 of 3 killed (66.7 %), 1 survived
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if got := mutants["runner/x"]; len(got) != 2 || got[0].File != "runner/x/a.go" {
		t.Errorf("parts not merged in file order: %+v", got)
	}
}
