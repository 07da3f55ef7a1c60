// Command mutline runs the mutants a gremlins dry run lists for one package, each
// against only the tests that run the mutant's line, and writes a report in gremlins'
// JSON format (bench/mutsum reads it). bench/mutation.sh runs it for MUTATION_SELECT=line.
//
// gremlins v0.6.0 runs every mutant against all of its package's tests. A test that
// never runs a line cannot notice a change to it, so the verdicts are the same when a
// mutant runs only the tests whose coverage, measured alone, counts its line; on a
// package whose tests each exercise a part of it, that is a fraction of the time.
//
// A mutant is the token at its position swapped as gremlins swaps it (the five
// mutators gremlins enables by default), given to `go test` as an -overlay of its file,
// so no copy of the module is made and mutants build side by side. Its verdict follows
// gremlins: the tests failed (exit status 1) is KILLED, the deadline passed is TIMED
// OUT, exit status 2 is NOT VIABLE, and a pass is LIVED; a mutant whose test build
// fails is NOT VIABLE too (gremlins counts it killed). The deadline is the
// coefficient times the chosen tests' time, at least -min-timeout.
//
// Usage: mutline -dry DRY.json -cover DIR [-jobs N] [-coef C] [-min-timeout D] -o OUT.json PKG
// run from the module's root; PKG is the package's folder from there. DIR holds, for
// each test, NAME.cov (its coverage profile, run alone) and NAME.time (its time in
// nanoseconds). GOFLAGS and the rest of the environment reach `go test` unchanged.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// swaps is each default gremlins mutator's token swap (gremlins' internal/engine
// mappings.go, v0.6.0).
var swaps = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE": {
		token.ADD: token.SUB, token.MUL: token.QUO, token.QUO: token.MUL,
		token.REM: token.MUL, token.SUB: token.ADD,
	},
	"CONDITIONALS_BOUNDARY": {
		token.GEQ: token.GTR, token.GTR: token.GEQ, token.LEQ: token.LSS, token.LSS: token.LEQ,
	},
	"CONDITIONALS_NEGATION": {
		token.EQL: token.NEQ, token.GEQ: token.LSS, token.GTR: token.LEQ,
		token.LEQ: token.GTR, token.LSS: token.GEQ, token.NEQ: token.EQL,
	},
	"INCREMENT_DECREMENT": {token.DEC: token.INC, token.INC: token.DEC},
	"INVERT_NEGATIVES":    {token.SUB: token.ADD},
}

// mutation is one entry of a gremlins report.
type mutation struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

type fileReport struct {
	Name      string     `json:"file_name"`
	Mutations []mutation `json:"mutations"`
}

type report struct {
	Module string       `json:"go_module"`
	Files  []fileReport `json:"files"`
}

// mutate returns src with the token at line:col (1-based, in bytes, as go/token
// counts) swapped as the mutator typ swaps it.
func mutate(src []byte, line, col int, typ string) ([]byte, error) {
	swap, ok := swaps[typ]
	if !ok {
		return nil, fmt.Errorf("mutator %s: not one of gremlins' default five", typ)
	}
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, 0)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return nil, fmt.Errorf("%d:%d: no token starts there", line, col)
		}
		p := fset.Position(pos)
		if p.Line < line || (p.Line == line && p.Column < col) {
			continue
		}
		if p.Line != line || p.Column != col {
			return nil, fmt.Errorf("%d:%d: no token starts there", line, col)
		}
		to, ok := swap[tok]
		if !ok {
			return nil, fmt.Errorf("%d:%d: %s has no %s mutation", line, col, tok, typ)
		}
		off := f.Offset(pos)
		out := make([]byte, 0, len(src)+1)
		out = append(out, src[:off]...)
		out = append(out, to.String()...)
		return append(out, src[off+len(tok.String()):]...), nil
	}
}

// coverage is, for each file (by base name) and line, the tests that ran it, and each
// test's time alone.
type coverage struct {
	lines map[string]map[int][]string
	times map[string]time.Duration
}

// profileLine is a line of a Go coverage profile: file:l1.c1,l2.c2 statements count.
var profileLine = regexp.MustCompile(`^(.+):(\d+)\.\d+,(\d+)\.\d+ \d+ (\d+)$`)

// maxProfile bounds one coverage profile read.
const maxProfile = 64 << 20

func readCoverage(dir string) (*coverage, error) {
	c := &coverage{lines: map[string]map[int][]string{}, times: map[string]time.Duration{}}
	profiles, err := filepath.Glob(filepath.Join(dir, "*.cov"))
	if err != nil {
		return nil, err
	}
	if len(profiles) == 0 {
		return nil, fmt.Errorf("%s: no coverage profile (NAME.cov)", dir)
	}
	for _, p := range profiles {
		name := strings.TrimSuffix(filepath.Base(p), ".cov")
		if err := c.readProfile(p, name); err != nil {
			return nil, err
		}
		raw, err := os.ReadFile(strings.TrimSuffix(p, ".cov") + ".time")
		if err != nil {
			return nil, fmt.Errorf("test %s: its time: %w", name, err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err != nil || ns < 0 {
			return nil, fmt.Errorf("test %s: its time %q: want nanoseconds", name, strings.TrimSpace(string(raw)))
		}
		c.times[name] = time.Duration(ns)
	}
	return c, nil
}

func (c *coverage) readProfile(path, test string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxProfile))
	seen := map[[2]string]bool{}
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if n == 1 && strings.HasPrefix(text, "mode:") {
			continue
		}
		m := profileLine.FindStringSubmatch(text)
		if m == nil {
			return fmt.Errorf("%s:%d: not a coverage profile line: %q", path, n, text)
		}
		if m[4] == "0" {
			continue
		}
		file := filepath.Base(m[1])
		from, _ := strconv.Atoi(m[2])
		to, _ := strconv.Atoi(m[3])
		if c.lines[file] == nil {
			c.lines[file] = map[int][]string{}
		}
		for l := from; l <= to; l++ {
			k := [2]string{file, strconv.Itoa(l)}
			if !seen[k] {
				seen[k] = true
				c.lines[file][l] = append(c.lines[file][l], test)
			}
		}
	}
	return sc.Err()
}

// tests returns the tests that ran file:line, in order, and their time alone.
func (c *coverage) tests(file string, line int) ([]string, time.Duration) {
	ts := slices.Clone(c.lines[file][line])
	slices.Sort(ts)
	var d time.Duration
	for _, t := range ts {
		d += c.times[t]
	}
	return ts, d
}

// tailBuffer keeps the last max bytes written to it: the end of go test's output,
// where it says whether the build failed.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// job is one mutant: Files[fi].Mutations[mi] of the report.
type job struct {
	file   string
	fi, mi int
	m      mutation
}

type runner struct {
	pkg        string
	cov        *coverage
	coef       int
	minTimeout time.Duration
	tmp        string
	mu         sync.Mutex
}

// run gives one mutant its verdict.
func (r *runner) run(ctx context.Context, j job, n int) (string, error) {
	path := filepath.Join(r.pkg, j.file)
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	mutated, err := mutate(src, j.m.Line, j.m.Column, j.m.Type)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Join(r.tmp, strconv.Itoa(n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, j.file), mutated, 0o600); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {abs: filepath.Join(dir, j.file)}})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o600); err != nil {
		return "", err
	}
	tests, alone := r.cov.tests(j.file, j.m.Line)
	deadline := time.Duration(r.coef) * alone
	if deadline < r.minTimeout {
		deadline = r.minTimeout
	}
	args := []string{"test", "-overlay", filepath.Join(dir, "overlay.json"), "-timeout", (deadline + 2*time.Second).String(), "-failfast"}
	// gremlins counted the line covered; a line no test ran alone (a test that
	// needs another before it) is given every test, as gremlins gives it.
	if len(tests) > 0 {
		args = append(args, "-run", "^("+strings.Join(tests, "|")+")$")
	}
	args = append(args, "./"+filepath.ToSlash(r.pkg))
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOTMPDIR="+dir)
	tail := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = tail, tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return "TIMED OUT", nil
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return "", ctx.Err()
	}
	// The test binary's own children (git, a fake server) go with the group.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var exit *exec.ExitError
	out := tail.String()
	switch {
	case err == nil:
		return "LIVED", nil
	case strings.Contains(out, "[setup failed]") || strings.HasPrefix(out, "go: "):
		return "", fmt.Errorf("%s:%d:%d: go test could not start:\n%s", j.file, j.m.Line, j.m.Column, out)
	case strings.Contains(out, "[build failed]"):
		// A swap the compiler refuses (a string's + made -) changes no behaviour.
		// gremlins v0.6.0 counts it killed, as it counts any exit status 1.
		return "NOT VIABLE", nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return "KILLED", nil
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		return "NOT VIABLE", nil
	case errors.As(err, &exit):
		return "LIVED", nil
	}
	return "", err
}

func main() {
	dry := flag.String("dry", "", "gremlins' dry-run report (its -o JSON) of the package")
	coverDir := flag.String("cover", "", "folder of each test's coverage profile (NAME.cov) and time in ns (NAME.time)")
	jobs := flag.Int("jobs", 1, "mutants run at a time")
	coef := flag.Int("coef", 10, "a mutant's deadline as a multiple of its tests' time alone")
	minTimeout := flag.Duration("min-timeout", 60*time.Second, "the least deadline of a mutant's tests")
	outPath := flag.String("o", "", "the report to write, in gremlins' JSON format")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mutline -dry DRY.json -cover DIR [-jobs N] [-coef C] [-min-timeout D] -o OUT.json PKG")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *dry == "" || *coverDir == "" || *outPath == "" || flag.NArg() != 1 || *jobs < 1 || *coef < 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, flag.Arg(0), *dry, *coverDir, *outPath, *jobs, *coef, *minTimeout, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, pkg, dryPath, coverDir, outPath string, jobs, coef int, minTimeout time.Duration, out io.Writer) error {
	raw, err := os.ReadFile(dryPath)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return fmt.Errorf("%s: %w", dryPath, err)
	}
	cov, err := readCoverage(coverDir)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mutline")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r := &runner{pkg: pkg, cov: cov, coef: coef, minTimeout: minTimeout, tmp: tmp}
	var todo []job
	for fi, f := range rep.Files {
		for mi, m := range f.Mutations {
			switch m.Status {
			case "RUNNABLE":
				todo = append(todo, job{file: f.Name, fi: fi, mi: mi, m: m})
			case "NOT COVERED":
			default:
				return fmt.Errorf("%s: %s:%d:%d is %s: want a dry run's RUNNABLE or NOT COVERED", dryPath, f.Name, m.Line, m.Column, m.Status)
			}
		}
	}
	start := time.Now()
	ch := make(chan int)
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				status, err := r.run(ctx, todo[i], i)
				if err != nil {
					errs[i] = err
					continue
				}
				j := todo[i]
				rep.Files[j.fi].Mutations[j.mi].Status = status
				r.mu.Lock()
				fmt.Fprintf(out, "%12s %s at %s:%d:%d\n", status, j.m.Type, j.file, j.m.Line, j.m.Column)
				r.mu.Unlock()
			}
		}()
	}
feed:
	for i := range todo {
		select {
		case ch <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%d mutants in %s\n", len(todo), time.Since(start).Round(time.Second))
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return os.WriteFile(outPath, b, 0o644)
}
