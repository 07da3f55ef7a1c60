package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestReportLastLine(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	cfg := config{pairs: 400, seed: 1, capRuns: 10, noise: 3, effect: 5, big: 20, fixed: []int{5}, minDet: 101, maxFalse: 100}
	ok, err := report(&b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Error("a detection share above 100 % was met")
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	last := lines[len(lines)-1]
	re := regexp.MustCompile(`^ab: detect 5% in (\d+\.\d) % of cases at 10 repeats/side, false calls (\d+\.\d) %$`)
	m := re.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line %q", last)
	}
	// 400 pairs are few, but a 5 % change under 3 % noise at 10 a side is found far
	// more often than not, and no-change pairs are rarely called.
	x, _ := strconv.ParseFloat(m[1], 64)
	y, _ := strconv.ParseFloat(m[2], 64)
	if x < 70 || y > 10 {
		t.Errorf("figures: %q", last)
	}
	if len(lines) != 1+2*2+1+1 {
		t.Errorf("%d lines:\n%s", len(lines), b.String())
	}
	if _, err := report(&b, config{pairs: 2, capRuns: 10}); err == nil {
		t.Error("2 pairs: no error")
	}
}
