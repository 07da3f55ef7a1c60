package config

import (
	"strings"
	"testing"
)

// compare.fail_slower_pct: 0 by default (the check run stays neutral), a percentage
// up to 1000, refused with the file's line otherwise.
func TestCompareFailSlowerPct(t *testing.T) {
	const name = ".github/perfbot.yml"
	c, err := Parse([]byte(base), name)
	if err != nil {
		t.Fatal(err)
	}
	if c.Compare.FailSlowerPct != 0 || Default().Compare.FailSlowerPct != 0 {
		t.Errorf("the default is %v, want 0 (neutral)", c.Compare.FailSlowerPct)
	}
	c, err = Parse([]byte(base+"compare:\n  fail_slower_pct: 2.5\n"), name)
	if err != nil || c.Compare.FailSlowerPct != 2.5 {
		t.Fatalf("fail_slower_pct 2.5: %v, %+v", err, c.Compare)
	}
	for _, tc := range []struct{ file, want string }{
		{base + "compare:\n  fail_slower_pct: -1\n", name + ":8: compare.fail_slower_pct: must be 0 (the check run stays neutral) or a slowdown in percent up to 1000 (got -1)"},
		{base + "compare:\n  fail_slower_pct: 5000\n", name + ":8: compare.fail_slower_pct: must be 0"},
		{base + "compare:\n  fail_slower_pct: five\n", name + ":8"},
		{base + "compare:\n  fail_slower_pct: .nan\n", name + ":8"},
		{base + "compare:\n  fail_slower: 5\n", name + ":8"},
	} {
		_, err := Parse([]byte(tc.file), name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.file[len(base):], err, tc.want)
		}
	}
	if err := (Config{Compare: Compare{FailSlowerPct: -2}}).Validate(); err == nil || !strings.Contains(err.Error(), "compare.fail_slower_pct") {
		t.Errorf("Validate of a negative threshold = %v", err)
	}
}
