package results

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lablup/perfbot/runner/baseline"
)

// The changes earlier nights confirmed, from the manifests of a history folder: a
// regression or an improvement counts from its first night (its own night when the
// manifest predates Since); a re-measure that did not confirm, another host's manifest,
// tonight's and later ones, a manifest whose stem is not its name, a link and a broken
// file do not count.
func TestConfirmedChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	save := func(stem string, rms ...Remeasure) {
		t.Helper()
		n := Nightly{Stem: stem, Date: stem[len(stem)-10:], Remeasures: rms}
		if err := n.Save(dir); err != nil {
			t.Fatal(err)
		}
	}
	const pair = "rocm_strixhalo-gfx1151"
	save(pair+"_2026-11-02", Remeasure{Model: "llama", Verdict: baseline.Regression})
	save(pair+"_2026-11-12", Remeasure{Model: "llama", Verdict: baseline.Regression, Since: "2026-11-10"},
		Remeasure{Model: "qwen", Verdict: baseline.NotConfirmed, Since: "2026-11-12"})
	save(pair+"_2026-11-13", Remeasure{Model: "qwen", Verdict: baseline.Improvement, Since: "2026-11-12"},
		Remeasure{Model: "llama", Verdict: baseline.Suspected, Since: "2026-11-13"})
	save(pair+"_2026-11-14", Remeasure{Model: "qwen", Verdict: baseline.Improvement, Since: "2026-11-12"})
	save("rocm_other-gfx1201_2026-11-05", Remeasure{Model: "llama", Verdict: baseline.Regression})
	save(pair+"_2026-11-20", Remeasure{Model: "llama", Verdict: baseline.Regression})
	// A manifest copied under another night's name, a link to a good one, a broken one.
	b, err := os.ReadFile(filepath.Join(dir, pair+"_2026-11-02"+NightlySuffix))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{pair + "_2026-11-03" + NightlySuffix: string(b), pair + "_2026-11-04" + NightlySuffix: "{"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, pair+"_2026-11-12"+NightlySuffix), filepath.Join(dir, pair+"_2026-11-06"+NightlySuffix)); err != nil {
		t.Fatal(err)
	}
	got := ConfirmedChanges(dir, pair, "2026-11-20")
	want := map[string][]string{"llama": {"2026-11-02", "2026-11-10"}, "qwen": {"2026-11-12"}}
	if len(got) != len(want) || !slices.Equal(got["llama"], want["llama"]) || !slices.Equal(got["qwen"], want["qwen"]) {
		t.Errorf("confirmed %v, want %v", got, want)
	}
	if got := ConfirmedChanges(dir, pair, "2026-11-12"); len(got) != 1 || !slices.Equal(got["llama"], []string{"2026-11-02"}) {
		t.Errorf("before 2026-11-12: %v", got)
	}
	if got := ConfirmedChanges(filepath.Join(dir, "none"), pair, "2026-11-20"); len(got) != 0 {
		t.Errorf("no folder: %v", got)
	}
}
