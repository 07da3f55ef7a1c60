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
		seed: 1, noise: 3, step: 5, maxMedian: 3, maxP90: 6, maxFalse: 1, minRight: 101, maxRuns: 60}
	ok, err := report(&b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Error("a right share above 100 % was met")
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 1+3*2+2 {
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
	bi := regexp.MustCompile(`^bisect: culprit right in (\d+\.\d)% of 40 runs, mean (\d+\.\d) single-model runs$`)
	m = bi.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("line %q", lines[len(lines)-1])
	}
	if x, _ := strconv.ParseFloat(m[1], 64); x < 60 {
		t.Errorf("bisection right in %v %%", x)
	}
	if r, _ := strconv.ParseFloat(m[2], 64); r > 60 {
		t.Errorf("bisection runs %v over the budget", r)
	}
	if _, err := report(&b, config{histories: 1}); err == nil {
		t.Error("1 history: no error")
	}
}
