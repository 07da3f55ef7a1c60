package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// What Session.Save writes, ReadSession gives back unchanged.
func TestReadSessionRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	started := time.Date(2026, 9, 30, 17, 41, 1, 0, time.FixedZone("KST", 9*3600))
	want := Session{
		Commit: "929c80ab" + strings.Repeat("0", 32), GFX: "gfx1151", Folder: "gfx1151_929c80ab",
		OverlayCommit: "75915908", Date: "2026-09-30", Started: started, Finished: started.Add(2 * time.Hour),
		State: "complete", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"},
		Shape:    Shape{Prompt: 512, Generate: 128, Warmup: 20},
		Profiler: []string{"--kernel-trace", "--stats", "--output-format", "csv"},
		Build:    Build{Command: BuildCommand, Status: "ok", Seconds: 312.4, Log: "build.log"},
		Runs: []RunRecord{
			{Name: "Meta-Llama-3.1-8B-Instruct-4bit_greedy", Model: "llama", Sampling: "greedy", Status: StatusOK,
				Plain: &Phase{Label: "plain", Verdict: "clean", Attempts: 1, WaitSecs: 90.5}, GPUMsPerToken: 23.3429},
			{Name: "Meta-Llama-3.1-8B-Instruct-4bit_t0.7-p0.95", Model: "llama", Sampling: "t0.7-p0.95",
				Status: StatusBenchCrashed, Reason: "the profiled run exited with status 139 (SIGSEGV)"},
		},
		GuardLog: GuardLogFile, HostInfo: HostInfoFile,
	}
	if err := want.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSession(filepath.Join(dir, SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("read back (-saved +read):\n%s", diff)
	}
}

func TestReadSessionRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ReadSession(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not json", `{"commit": `, "unexpected end of JSON input"},
		{"array", `[{"commit": "929c80ab"}]`, "want a JSON object"},
		{"null", `null`, "want a JSON object"},
		{"wrong type", `{"runs": "all ok"}`, "cannot unmarshal string"},
		{"bad time", `{"started": "yesterday"}`, "yesterday"},
		{"bad commit", `{"commit": "HEAD"}`, `commit "HEAD" is not a git commit SHA`},
		{"bad date", `{"date": "30/09/2026"}`, `date "30/09/2026" is not YYYY-MM-DD`},
		{"unnamed run", `{"runs": [{"status": "ok"}]}`, "run 1 has no name"},
		{"run name that is a path", `{"runs": [{"name": "../../etc/x_greedy", "status": "ok"}]}`, `run 1: run name "../../etc/x_greedy" holds a /`},
		{"run name with a newline", `{"runs": [{"name": "x\n_greedy", "status": "ok"}]}`, `run 1: run name "x\n_greedy" holds a character that is not printable`},
		{"unknown status", `{"runs": [{"name": "a_greedy", "status": "done"}]}`, `run a_greedy has status "done"; a runner writes one of ok, guard_gave_up`},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadSession(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p+" is not a manifest of `perfbot run profile`") {
			t.Errorf("%s: %v; want an error naming the file and saying %q", tc.name, err, tc.want)
		}
	}
	// Keys a newer runner may add are not an error.
	p := filepath.Join(dir, "newer.json")
	if err := os.WriteFile(p, []byte(`{"commit": "929c80ab", "date": "2026-09-30", "queue_position": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSession(p); err != nil || s.Commit != "929c80ab" || s.Date != "2026-09-30" {
		t.Errorf("newer manifest: %+v, %v", s, err)
	}
}
