package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/results"
)

// Without a session manifest the page names the models and samplings from the run
// names. A top-p run written by the target repo's analyzer (a temperature, no top-p)
// reads as its run tag says, t0.7-p0.95, and its model as the configured name, so the
// `/profile rocm` line the page prints reruns the runs it shows.
func TestReproduceLineOfATopPRunWithoutSession(t *testing.T) {
	t.Parallel()
	const run = "Qwen3-30B-A3B-4bit_t0.7-p0.95"
	tg, sum, _ := dryProfile(t, profile{date: "2026-09-30"}, false, func(o *Options) {
		dir, err := findFolder(o.ResultsDir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, results.SessionFile)); err != nil {
			t.Fatal(err)
		}
		greedy := readFile(t, filepath.Join(dir, "Qwen3-30B-A3B-4bit_greedy_summary.json"))
		sampled := strings.Replace(greedy, `"name": "Qwen3-30B-A3B-4bit_greedy"`, `"name": "`+run+`"`, 1)
		sampled = strings.Replace(sampled, `"temperature": 0.0`, `"temperature": 0.7`, 1)
		if sampled == greedy || strings.Contains(sampled, "top_p") {
			t.Fatal("the sampled summary was not made")
		}
		writeFile(t, filepath.Join(dir, run+"_summary.json"), sampled)
		o.Config.Models = []config.Model{
			{Name: "llama", Dir: "models/mlx/Meta-Llama-3.1-8B-Instruct-4bit", ModelType: "llama", WeightsGiB: 4.5},
			{Name: "qwen3", Dir: "models/mlx/Qwen3-30B-A3B-4bit/", ModelType: "qwen3_moe", WeightsGiB: 16},
		}
	})
	page := tg.file(t, sum.Git.Commit, sum.Report)
	want := "/profile rocm models=llama,qwen3 sampling=greedy,t0.7-p0.95 ref=" + tg.base + "\n"
	if !strings.Contains(page, want) {
		t.Errorf("the page lacks %q", want)
	}
	if !strings.Contains(page, "| `"+run+"` | qwen3\\_moe | t0.7-p0.95 |") {
		t.Errorf("the results table does not show %s as t0.7-p0.95", run)
	}
}
