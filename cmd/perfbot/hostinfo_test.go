package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

// hostinfo on the repo's fake host (fake tools first on PATH, fake root) prints the
// table and the JSON; a missing checkout is an unknown, not an error.
func TestHostinfoCLIFakeHost(t *testing.T) {
	fake := filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host")
	t.Setenv("PATH", filepath.Join(fake, "bin")+":"+os.Getenv("PATH"))
	t.Setenv("FAKEHOST_ROCMINFO", testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"))
	root := filepath.Join(fake, "root")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"hostinfo", "--root", root, "--repo", ""}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"ROCm              10.0.0\n",
		"HIP               7.15.26333-abcdef\n",
		"GPU               Radeon 8060S Graphics\n",
		"gfx target        gfx1151\n",
		"VRAM              96 GiB\n",
		"rocprofv3 flags   --hip-graph-trace, -f, --output-format\n",
		"mlxcel commit     unknown: no mlxcel checkout given\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"hostinfo", "--json", "--root", root, "--repo", ""}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if g := got["gfx_target"].(map[string]any)["value"]; g != "gfx1151" {
		t.Errorf("gfx_target = %v", got["gfx_target"])
	}
	if r := got["mlxcel_commit"].(map[string]any)["unknown"]; r != "no mlxcel checkout given" {
		t.Errorf("mlxcel_commit = %v", got["mlxcel_commit"])
	}
}

func TestHostinfoCLIUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"hostinfo", "extra"}, {"hostinfo", "--root", "/no/such/dir"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
