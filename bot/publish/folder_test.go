package publish

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/report"
)

func TestReadFolderHostFacts(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("c", 40)
	res := layResults(t, base, profile{date: "2026-09-30"})
	f, err := readFolder(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []report.Row{{Label: "ROCm", Value: "10.0.0"}, {Label: "GPU", Value: "Radeon 8060S Graphics"}} {
		if !slices.Contains(f.env, want) {
			t.Errorf("environment %v lacks %v", f.env, want)
		}
	}
	// A hand-made folder with flat facts is shown key by key.
	writeJSON(t, filepath.Join(res, "gfx1151_cccccccc", "hostinfo.json"), map[string]any{"gpu": "Radeon", "vram_bytes": 103079215104, "extra": map[string]any{"rustc": "1.90"}})
	if f, err = readFolder(res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []report.Row{{Label: "GPU", Value: "Radeon"}, {Label: "GPU memory", Value: "96 GiB (103079215104 bytes)"}, {Label: "extra.rustc", Value: "1.90"}} {
		if !slices.Contains(f.env, want) {
			t.Errorf("environment %v lacks %v", f.env, want)
		}
	}
	if f.gfx != "gfx1151" || f.commit8 != "cccccccc" || len(f.runs) != 2 || f.session.Date != "2026-09-30" {
		t.Errorf("folder %+v", f)
	}
}

func TestReadFolderRefusals(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	if _, err := readFolder(empty); err == nil || !strings.Contains(err.Error(), "no run summaries") {
		t.Errorf("empty folder: %v", err)
	}
	two := t.TempDir()
	for _, c := range []string{"gfx1151_aaaaaaaa", "gfx1151_bbbbbbbb"} {
		writeFile(t, filepath.Join(two, c, "x_greedy_summary.json"), "{}")
	}
	if _, err := readFolder(two); err == nil || !strings.Contains(err.Error(), "give the one to publish") {
		t.Errorf("two folders: %v", err)
	}
	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, "gfx1151_aaaaaaaa", "x_greedy_summary.json"), `{"name": "y_greedy"}`)
	if _, err := readFolder(bad); err == nil || !strings.Contains(err.Error(), "same name") {
		t.Errorf("misnamed summary: %v", err)
	}
}
