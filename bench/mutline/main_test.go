package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMutate(t *testing.T) {
	src := "package p\n\nfunc f(a, b int) int {\n\tif a < b && -a != b {\n\t\ta++\n\t}\n\treturn a * b\n}\n"
	cases := []struct {
		line, col int
		typ, want string
	}{
		{4, 7, "CONDITIONALS_BOUNDARY", "if a <= b && -a != b {"},
		{4, 7, "CONDITIONALS_NEGATION", "if a >= b && -a != b {"},
		{4, 14, "INVERT_NEGATIVES", "if a < b && +a != b {"},
		{4, 17, "CONDITIONALS_NEGATION", "if a < b && -a == b {"},
		{5, 4, "INCREMENT_DECREMENT", "a--"},
		{7, 11, "ARITHMETIC_BASE", "return a / b"},
	}
	for _, c := range cases {
		out, err := mutate([]byte(src), c.line, c.col, c.typ)
		if err != nil {
			t.Errorf("%d:%d %s: %v", c.line, c.col, c.typ, err)
			continue
		}
		got := strings.TrimSpace(strings.Split(string(out), "\n")[c.line-1])
		if got != c.want {
			t.Errorf("%d:%d %s: line %q, want %q", c.line, c.col, c.typ, got, c.want)
		}
		// Only that line changed.
		if a, b := strings.Split(src, "\n"), strings.Split(string(out), "\n"); len(a) != len(b) {
			t.Errorf("%d:%d %s: %d lines, want %d", c.line, c.col, c.typ, len(b), len(a))
		}
	}
	for _, c := range []struct {
		line, col int
		typ, want string
	}{
		{4, 5, "CONDITIONALS_NEGATION", "IDENT has no CONDITIONALS_NEGATION mutation"}, // a, not an operator
		{4, 6, "CONDITIONALS_NEGATION", "no token starts there"},                       // the space after a
		{4, 17, "CONDITIONALS_BOUNDARY", "!= has no CONDITIONALS_BOUNDARY mutation"},
		{4, 7, "INVERT_LOGICAL", "not one of gremlins' default five"},
		{40, 1, "ARITHMETIC_BASE", "no token starts there"},
	} {
		if _, err := mutate([]byte(src), c.line, c.col, c.typ); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d:%d %s: error %v, want one saying %q", c.line, c.col, c.typ, err, c.want)
		}
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 8}
	b.Write([]byte("0123456"))
	b.Write([]byte("789ab"))
	if got := b.String(); got != "456789ab" {
		t.Errorf("tail %q, want the last 8 bytes %q", got, "456789ab")
	}
}

// pos is the line and column of the n-th (from 1) occurrence of s in src.
func pos(t *testing.T, src, s string, n int) (int, int) {
	t.Helper()
	off := -1
	for i := 0; i < n; i++ {
		next := strings.Index(src[off+1:], s)
		if next < 0 {
			t.Fatalf("%q: no occurrence %d", s, n)
		}
		off += 1 + next
	}
	line := strings.Count(src[:off], "\n") + 1
	return line, off - strings.LastIndex(src[:off], "\n")
}

// TestRunGivesGremlinsVerdicts runs mutants of a small module with real go test runs:
// one its tests notice, one they cannot, one that does not compile and one that loops.
func TestRunGivesGremlinsVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a module's tests once per mutant")
	}
	root := t.TempDir()
	src := `package m

func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func Cat(a, b string) string { return a + b }

func Sum(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i
	}
	return s
}
`
	tests := `package m

import "testing"

func TestMax(t *testing.T) {
	if Max(2, 1) != 2 || Max(1, 2) != 2 {
		t.Fatal("Max")
	}
}

func TestCat(t *testing.T) {
	if Cat("a", "b") != "ab" {
		t.Fatal("Cat")
	}
}

func TestSum(t *testing.T) {
	if Sum(3) != 3 {
		t.Fatal("Sum")
	}
}
`
	for name, body := range map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n", "m/m.go": src, "m/m_test.go": tests,
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cover := filepath.Join(root, "cover")
	if err := os.Mkdir(cover, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	t.Setenv("GOFLAGS", "-count=1 -vet=off")
	for _, name := range []string{"TestMax", "TestCat", "TestSum"} {
		cmd := exec.Command("go", "test", "-run", "^"+name+"$", "-coverprofile", filepath.Join(cover, name+".cov"), "./m")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s alone: %v\n%s", name, err, out)
		}
		if err := os.WriteFile(filepath.Join(cover, name+".time"), []byte(strconv.Itoa(int(time.Millisecond))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gt, gtc := pos(t, src, ">", 1)
	add, addc := pos(t, src, "+", 1)
	inc, incc := pos(t, src, "++", 1)
	dry := report{Module: "example.com/m", Files: []fileReport{{Name: "m.go", Mutations: []mutation{
		{Type: "CONDITIONALS_NEGATION", Status: "RUNNABLE", Line: gt, Column: gtc},
		{Type: "CONDITIONALS_BOUNDARY", Status: "RUNNABLE", Line: gt, Column: gtc},
		{Type: "ARITHMETIC_BASE", Status: "RUNNABLE", Line: add, Column: addc},
		{Type: "INCREMENT_DECREMENT", Status: "RUNNABLE", Line: inc, Column: incc},
		{Type: "ARITHMETIC_BASE", Status: "NOT COVERED", Line: 1, Column: 1},
	}}}}
	raw, err := json.Marshal(dry)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("dry.json", raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// The mutants' builds and test binaries go below TMPDIR: none may outlive the run.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var log bytes.Buffer
	if err := run(context.Background(), "m", "dry.json", cover, "out.json", 2, 10, 3*time.Second, &log); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	raw, err = os.ReadFile("out.json")
	if err != nil {
		t.Fatal(err)
	}
	var got report
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"KILLED", "LIVED", "NOT VIABLE", "TIMED OUT", "NOT COVERED"}
	for i, m := range got.Files[0].Mutations {
		if m.Status != want[i] {
			t.Errorf("%s at %d:%d: %s, want %s", m.Type, m.Line, m.Column, m.Status, want[i])
		}
	}
	if !strings.Contains(log.String(), "KILLED CONDITIONALS_NEGATION at m.go:4:") {
		t.Errorf("the log names no verdict as gremlins does:\n%s", log.String())
	}
	// The mutated files were overlays: the module's own file is as it was.
	if b, err := os.ReadFile("m/m.go"); err != nil || string(b) != src {
		t.Errorf("m/m.go changed on disk (%v)", err)
	}
	// The looping mutant's test binary was stopped with its go test, not left behind.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := processesUnder(t, tmp)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the run still there: %q", left)
		}
	}

	// A line no test ran alone (here: TestMax's profile is missing) gets every test.
	if err := os.Remove(filepath.Join(cover, "TestMax.cov")); err != nil {
		t.Fatal(err)
	}
	dry.Files[0].Mutations = dry.Files[0].Mutations[:1]
	raw, _ = json.Marshal(dry)
	os.WriteFile("dry.json", raw, 0o644)
	if err := run(context.Background(), "m", "dry.json", cover, "out.json", 1, 10, 30*time.Second, &log); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	raw, _ = os.ReadFile("out.json")
	got = report{}
	json.Unmarshal(raw, &got)
	if m := got.Files[0].Mutations[0]; m.Status != "KILLED" {
		t.Errorf("a mutant of a line no test ran alone: %s, want KILLED by all the tests", m.Status)
	}
}

// processesUnder lists the command lines of the running processes that name a path
// below dir (a zombie has none).
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(dir)) {
			out = append(out, string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

func TestRunRefusesAReportThatIsNotADryRun(t *testing.T) {
	dir := t.TempDir()
	cover := filepath.Join(dir, "cover")
	os.Mkdir(cover, 0o755)
	os.WriteFile(filepath.Join(cover, "TestA.cov"), []byte("mode: set\nexample.com/m/m.go:3.1,4.2 1 1\n"), 0o644)
	os.WriteFile(filepath.Join(cover, "TestA.time"), []byte("1000\n"), 0o644)
	dry := filepath.Join(dir, "dry.json")
	os.WriteFile(dry, []byte(`{"files":[{"file_name":"m.go","mutations":[{"type":"ARITHMETIC_BASE","status":"KILLED","line":3,"column":1}]}]}`), 0o644)
	err := run(context.Background(), "m", dry, cover, filepath.Join(dir, "out.json"), 1, 10, time.Second, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "want a dry run's RUNNABLE or NOT COVERED") {
		t.Errorf("a finished report taken as a dry run: %v", err)
	}
	os.WriteFile(filepath.Join(cover, "TestA.time"), []byte("0\n"), 0o644)
	if c, err := readCoverage(cover); err != nil || c.times["TestA"] != 0 {
		t.Errorf("a test that took no time: %v, %v", c, err)
	}
	os.WriteFile(filepath.Join(cover, "TestA.time"), []byte("soon\n"), 0o644)
	if _, err := readCoverage(cover); err == nil || !strings.Contains(err.Error(), "want nanoseconds") {
		t.Errorf("a test time that is not a number: %v", err)
	}
	os.WriteFile(filepath.Join(cover, "TestA.cov"), []byte("mode: set\nnot a profile line\n"), 0o644)
	if _, err := readCoverage(cover); err == nil || !strings.Contains(err.Error(), "TestA.cov:2: not a coverage profile line") {
		t.Errorf("a broken profile: %v", err)
	}
}

func TestCoverageChoosesTheTestsOfALine(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"TestA.cov":  "mode: set\nexample.com/m/p/m.go:3.10,6.2 2 1\nexample.com/m/p/m.go:8.1,9.2 1 0\n",
		"TestB.cov":  "mode: set\nexample.com/m/p/m.go:5.1,5.20 1 1\nexample.com/m/p/m.go:8.1,9.2 1 3\n",
		"TestA.time": "2000000000", "TestB.time": "500000000",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	c, err := readCoverage(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line  int
		tests string
		time  time.Duration
	}{
		{3, "TestA", 2 * time.Second},
		{5, "TestA TestB", 2500 * time.Millisecond},
		{6, "TestA", 2 * time.Second},
		{8, "TestB", 500 * time.Millisecond}, // TestA's count there is 0
		{7, "", 0},
	} {
		ts, d := c.tests("m.go", tc.line)
		if strings.Join(ts, " ") != tc.tests || d != tc.time {
			t.Errorf("line %d: %v in %v, want [%s] in %v", tc.line, ts, d, tc.tests, tc.time)
		}
	}
}
