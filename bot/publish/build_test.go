package publish

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

// Page renders the real 2026-09-30 folder, which has no session, without a
// repository: the commit is the folder name's and the date unknown, each said in a
// note; the models and sampling come from the runs; every link to a results file is
// relative to the folder the page will be read from, wherever that is.
func TestPageOfAFolderWithoutASession(t *testing.T) {
	root := t.TempDir()
	res := filepath.Join(root, "results", "gfx1151_929c80ab")
	fix := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	entries, err := os.ReadDir(fix)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(fix, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(res, e.Name()), string(b))
	}
	for _, c := range []struct{ pageDir, link string }{
		{filepath.Join(root, "pages"), "(../results/gfx1151_929c80ab/Qwen3-30B-A3B-4bit_greedy_summary.json)"},
		{filepath.Join(root, "docs", "benchmark_results"), "(../../results/gfx1151_929c80ab/Qwen3-30B-A3B-4bit_greedy_summary.json)"},
		{filepath.Join(root, "results"), "(gfx1151_929c80ab/Qwen3-30B-A3B-4bit_greedy_summary.json)"},
		{root, "(results/gfx1151_929c80ab/Qwen3-30B-A3B-4bit_greedy_summary.json)"},
	} {
		page, notes, err := Page(PageOptions{ResultsDir: res, PageDir: c.pageDir})
		if err != nil {
			t.Fatalf("page read from %s: %v", c.pageDir, err)
		}
		for _, want := range []string{
			"the commit is the folder name's 929c80ab: no session.json records the full one",
			"the session has no date: the page says the date is unknown",
		} {
			if !slices.Contains(notes, want) {
				t.Errorf("page read from %s: no note %q in %q", c.pageDir, want, notes)
			}
		}
		wantIn(t, page, "# ROCm decode profile, gfx1151, date unknown\n",
			"Decode profile of mlxcel at `929c80ab` on gfx1151: 2 run(s) of Meta-Llama-3.1-8B-Instruct-4bit, Qwen3-30B-A3B-4bit with sampling greedy.",
			c.link)
		if strings.Contains(page, "]("+filepath.ToSlash(root)) || strings.Contains(page, "](/") {
			t.Errorf("page read from %s links a file by its absolute path", c.pageDir)
		}
	}
}
