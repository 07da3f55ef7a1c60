package attrib

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a careless or hostile rules file gets: NaN is no fraction, lists stay small,
// quoted values are cut and escaped, the file is bounded.
func TestParseRefusesHostileRules(t *testing.T) {
	t.Parallel()
	var classes strings.Builder
	for i := range 300 {
		fmt.Fprintf(&classes, "  - {name: c%d, pattern: 'c%d'}\n", i, i)
	}
	cases := []struct {
		name, old, new, want string
	}{
		{"NaN fraction", "    reach:\n", "    recoverable:\n      rope_append: {fraction: .nan, reason: r}\n    reach:\n", "units.0.recoverable.rope_append: give fraction: a number from 0 to 1"},
		{"infinite fraction", "    reach:\n", "    recoverable:\n      rope_append: {fraction: .inf, reason: r}\n    reach:\n", "give fraction"},
		{"300 classes", "classes:\n", "classes:\n" + classes.String(), "r.yml:2: classes: 302 entries, more than the 255 a rules file can have"},
		{"escape in a class name", "name: rope,", "name: \"ro\\e[2Jpe\",", `class name "ro\x1b[2Jpe": use lower-case`},
		{"a long role name", "    role: rope_append\n", "    role: " + strings.Repeat("R", 5000) + "\n", `... (4800 more bytes): use lower-case`},
	}
	for _, c := range cases {
		if !strings.Contains(baseRules, c.old) {
			t.Fatalf("base rules lack %q", c.old)
		}
		_, err := Parse([]byte(strings.Replace(baseRules, c.old, c.new, 1)), "r.yml")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.ContainsRune(err.Error(), 0x1b) || len(err.Error()) > 1000 {
			t.Errorf("%s: got %q, want %q", c.name, err, c.want)
		}
	}
	// A role listed twice in a unit is found with a set, however long the list.
	roles := strings.Repeat("rope_append, ", 200)
	if _, err := Parse([]byte(strings.Replace(baseRules, "roles: [rope_append]", "roles: ["+roles+"rope_append]", 1)), "r.yml"); err == nil || !strings.Contains(err.Error(), `role "rope_append" is listed twice`) {
		t.Errorf("duplicate unit role: %v", err)
	}
	big := filepath.Join(t.TempDir(), "rules.yml")
	os.WriteFile(big, append([]byte(baseRules), strings.Repeat("# pad\n", 200000)...), 0o644)
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "more than the 1 MiB") {
		t.Errorf("a 1.1 MiB rules file: %v", err)
	}
}
