package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestReportLastLines(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	cfg := config{histories: 60, null: 4, nights: 50, warm: 20, horizon: 15, repeats: 3, bisects: 40, commits: 32, abCap: 20,
		seed: 1, noise: 3, step: 5, maxMedian: 3, maxP90: 6, maxFalse: 1, minRight: 101, maxRuns: 60, compare: true}
	ok, err := report(&b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Error("a right share above 100 % was met")
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// The settings, then per noise kind two changepoint lines and two bisect lines (the
	// normal likelihood's, then the default's), then the two summary lines.
	if len(lines) != 1+4*2+2 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	cp := regexp.MustCompile(`^changepoint: 5% step found in median (\d+) nights \(90% within (\d+|more than 15)\), false alarms (\d+\.\d\d) per 100 nights$`)
	m := cp.FindStringSubmatch(lines[len(lines)-2])
	if m == nil {
		t.Fatalf("line %q", lines[len(lines)-2])
	}
	// A 5 % step at 3 % noise with 3 readings a night is found within days, not weeks.
	if n, _ := strconv.Atoi(m[1]); n < 1 || n > 5 {
		t.Errorf("median %d nights", n)
	}
	bi := regexp.MustCompile(`^bisect: culprit right in (\d+\.\d)% of 80 runs, mean (\d+\.\d) single-model runs$`)
	m = bi.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("line %q", lines[len(lines)-1])
	}
	if x, _ := strconv.ParseFloat(m[1], 64); x < 60 {
		t.Errorf("bisection right in %v %%", x)
	}
	if r, _ := strconv.ParseFloat(m[2], 64); r > 60 {
		t.Errorf("bisection runs %v on average", r)
	}
	// Each noise kind has its line, the normal likelihood's before it.
	kind := regexp.MustCompile(`^bisect: (gaussian|heavy-tailed \(t, 3 df\))(, normal likelihood)?: culprit right in (\d+\.\d)% of 40 runs, mean (\d+\.\d) single-model runs, \d+\.\d % undecided, \d+\.\d % not reproduced$`)
	var rights []float64
	for _, i := range []int{3, 4, 7, 8} {
		m := kind.FindStringSubmatch(lines[i])
		if m == nil || (m[2] == "") != (i%2 == 0) || (m[1] == "gaussian") != (i < 5) {
			t.Fatalf("line %d %q", i, lines[i])
		}
		x, _ := strconv.ParseFloat(m[3], 64)
		if m[2] == "" {
			rights = append(rights, x)
		}
	}
	// The exit criterion holds for each noise kind, not only for both together: a
	// threshold just above the worse kind's share fails although the summary meets it.
	lo, hi := min(rights[0], rights[1]), max(rights[0], rights[1])
	if lo == hi {
		t.Fatalf("both noise kinds right in %v %%: pick a seed where they differ", lo)
	}
	cfg.minRight, cfg.compare = lo+0.01, false
	b.Reset()
	if ok, err := report(&b, cfg); err != nil || ok {
		t.Errorf("right %v and %v %%, threshold %v: ok %v, %v", lo, hi, cfg.minRight, ok, err)
	}
	if strings.Contains(b.String(), "normal likelihood") {
		t.Error("the comparison without -compare")
	}
	cfg.minRight = lo
	b.Reset()
	if ok, err := report(&b, cfg); err != nil || !ok {
		t.Errorf("right %v and %v %%, threshold %v: ok %v, %v", lo, hi, cfg.minRight, ok, err)
	}
	if _, err := report(&b, config{histories: 1}); err == nil {
		t.Error("1 history: no error")
	}
}
