package results_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/results"
)

func TestProgressRoundTrip(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	p := results.Progress{RequestID: "42", Phase: results.PhaseBench, Done: 2, Planned: 5, Model: "qwen3-8b", ETASecs: 600, WrittenAt: at}
	if err := results.WriteProgress(dir, p); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "42.json"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("the file: %v, %v; want mode 0644 (the server reads it as another user)", fi, err)
	}
	got, err := results.ReadProgress(dir, "42")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Errorf("read %+v, want %+v", got, p)
	}
	if got.ETA() != 10*time.Minute {
		t.Errorf("ETA %v", got.ETA())
	}
	// A bench compare's file also holds its current verdicts.
	p.Verdicts = []string{"llama: decode tok/s faster, prefill tok/s no significant change"}
	if err := results.WriteProgress(dir, p); err != nil {
		t.Fatal(err)
	}
	if got, err := results.ReadProgress(dir, "42"); err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("read %+v, %v; want %+v", got, err, p)
	}
	// No temp file is left beside it.
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want the one file", len(ents))
	}
	if err := results.WriteProgress(dir, results.Progress{RequestID: "../x", Phase: "bench", WrittenAt: at}); err == nil {
		t.Error("a request id with a path was written")
	}
}

// A hostile progress file (the job runs the pinned commit's code on the host) is
// refused, or its text is cleaned: never followed through a link, read whole, or shown
// raw.
func TestProgressHostile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ok := `{"request_id":"7","phase":"profile","done":1,"planned":3,"model":"m","eta_secs":-1,"written_at":"2026-12-03T18:00:00Z"}`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"too large", strings.Repeat(" ", results.ProgressMax) + ok, "more than 4096 bytes"},
		{"unknown field", strings.Replace(ok, `"done"`, `"extra":1,"done"`, 1), "unknown field"},
		{"another request", strings.Replace(ok, `"7"`, `"8"`, 1), `names request "8"`},
		{"done beyond planned", strings.Replace(ok, `"done":1`, `"done":9`, 1), "done 9 of planned 3"},
		{"bad phase", strings.Replace(ok, `"profile"`, `"pwned\u001b[2J"`, 1), `phase "pwned\x1b[2J"`},
		{"not JSON", "\x1b[31m", "invalid character"},
		{"too many verdicts", strings.Replace(ok, `"model"`, `"verdicts":["a","b","c","d","e","f","g","h","i"],"model"`, 1), "9 verdict lines: want at most 8"},
		{"verdicts not strings", strings.Replace(ok, `"model"`, `"verdicts":[{"a":1}],"model"`, 1), "cannot unmarshal"},
	} {
		write("7.json", tc.body)
		if _, err := results.ReadProgress(dir, "7"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A symlink to another file is not followed.
	write("secret", ok)
	os.Remove(filepath.Join(dir, "7.json"))
	if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(dir, "7.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := results.ReadProgress(dir, "7"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("symlink: %v", err)
	}
	os.Remove(filepath.Join(dir, "7.json"))
	// A model name with control characters and a long tail is cleaned and clipped.
	write("7.json", strings.Replace(ok, `"model":"m"`, `"model":"evil\u0007\u001b[2Jname`+strings.Repeat("x", 300)+`"`, 1))
	p, err := results.ReadProgress(dir, "7")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(p.Model, "\x07\x1b") || len(p.Model) > 130 || !strings.HasPrefix(p.Model, "evil\uFFFD\uFFFD[2Jname") {
		t.Errorf("model %q, want control characters replaced and the name clipped", p.Model)
	}
	// Verdict lines are cleaned and clipped alike; empty ones are dropped.
	os.Remove(filepath.Join(dir, "7.json"))
	write("7.json", strings.Replace(ok, `"model"`, `"verdicts":["m: decode tok/s faster\u001b[2J\n**x**","","\u0000","`+strings.Repeat("y", 3000)+`"],"model"`, 1))
	if p, err = results.ReadProgress(dir, "7"); err != nil {
		t.Fatal(err)
	}
	if len(p.Verdicts) != 3 || p.Verdicts[0] != "m: decode tok/s faster\uFFFD[2J\uFFFD**x**" || p.Verdicts[1] != "\uFFFD" || len(p.Verdicts[2]) > 170 {
		t.Errorf("verdicts %q, want control characters replaced, the empty line dropped and the long one clipped", p.Verdicts)
	}
	if _, err := results.ReadProgress(dir, "nope"); err == nil {
		t.Error("a missing file was read")
	}
}
