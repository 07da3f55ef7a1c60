package attrib

import (
	"testing"
)

// FuzzParse: any bytes parse or fail without a panic, and accepted rules classify a
// name and list their roles and units without one either.
func FuzzParse(f *testing.F) {
	f.Add(DefaultRulesYAML())
	f.Add([]byte(baseRules))
	f.Add([]byte("version: 1\nclasses: [{name: a, pattern: '(?i)x+'}]\nroles: []\nunits: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data, "fuzz.yml")
		if err != nil {
			return
		}
		names := r.ClassNames()
		if names[len(names)-1] != Other {
			t.Fatalf("classes %v do not end with %s", names, Other)
		}
		for _, k := range []string{"", "void mlx::core::rocm::qmv_wide_kernel<__half>", "\xff"} {
			r.Classify(k)
		}
		if rn := r.RoleNames(); len(rn) == 0 || rn[0] != Unattributed || len(rn) > 256 {
			t.Fatalf("roles %v", rn)
		}
		for _, u := range r.Units() {
			if got, ok := r.Unit(u.ID); !ok || got.ID != u.ID {
				t.Fatalf("unit %s not found by its id", u.ID)
			}
		}
	})
}
