package hostinfo

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/host"
)

func TestParseRocminfoFixture(t *testing.T) {
	t.Parallel()
	f, err := os.Open(testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	agents, err := ParseRocminfo(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []Agent{
		{Name: "AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", MarketingName: "AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", VendorName: "CPU", DeviceType: "CPU", ComputeUnits: 32},
		// The ISA blocks' own `Name:` lines (6 spaces) must not replace the agent's.
		{Name: "gfx1151", MarketingName: "Radeon 8060S Graphics", VendorName: "AMD", DeviceType: "GPU", ComputeUnits: 40},
	}
	if d := cmp.Diff(want, agents); d != "" {
		t.Fatalf("agents (-want +got):\n%s", d)
	}
	if _, err := ParseRocminfo(strings.NewReader("ROCk module is NOT loaded\n")); err == nil {
		t.Fatal("output without agents must be an error")
	}
}

func TestParseUpstreamFixture(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	up := ParseUpstream(b)
	for k, v := range map[string]string{
		"source":                "https://github.com/NripeshN/mlx",
		"branch":                "rocm-support",
		"commit":                "75915908dfe5028335d318b10340313744fd3a8d",
		"retargeted_to_mlx_pin": "81ba1c6a0e50a9268b931579c2d4f1158b9aab5a",
	} {
		if up[k] != v {
			t.Errorf("%s = %q, want %q", k, up[k], v)
		}
	}
}

func TestParseRocprofHelp(t *testing.T) {
	t.Parallel()
	cases := []struct {
		help string
		want RocprofFlags
	}{
		{"  -f FMT, --output-format FMT\n  --hip-graph-trace [BOOL]\n", RocprofFlags{true, true, true, true}},
		{"  --output-format {csv,json}\n  --hip-trace [BOOL]\n", RocprofFlags{Known: true, OutputFormat: true}},
		// Look-alikes are not the flags.
		{"  --hip-graph-trace-x\n  -fno-thing\n  --output-formats\n", RocprofFlags{Known: true}},
		{"[-f {csv}] [--hip-graph-trace [BOOL]]", RocprofFlags{true, true, true, false}},
	}
	for _, tc := range cases {
		if got := ParseRocprofHelp(tc.help); got != tc.want {
			t.Errorf("ParseRocprofHelp(%q) = %+v, want %+v", tc.help, got, tc.want)
		}
	}
	if (RocprofFlags{ShortFormat: true}).FormatFlag() != "-f" || (RocprofFlags{}).FormatFlag() != "--output-format" {
		t.Error("FormatFlag")
	}
}

func TestGiBAndMemTotal(t *testing.T) {
	t.Parallel()
	if g := GiB(103079215104); g != "96 GiB" {
		t.Errorf("GiB(96 GiB) = %q", g)
	}
	if g := GiB(32559380 * 1024); g != "31.1 GiB" {
		t.Errorf("GiB(meminfo) = %q", g)
	}
	n, err := ParseMemTotal([]byte("MemFree: 1 kB\nMemTotal:       32559380 kB\n"))
	if err != nil || n != 32559380*1024 {
		t.Errorf("ParseMemTotal = %d, %v", n, err)
	}
	if _, err := ParseMemTotal([]byte("MemFree: 1 kB\n")); err == nil {
		t.Error("meminfo without MemTotal must be an error")
	}
}

// fakeHost is the repo's fake host (internal/fakehost/host) with the real rocminfo output
// of the fixtures, plus extra PATH dirs.
func fakeHost(t *testing.T, root string, env []string, extraPath ...string) host.Host {
	t.Helper()
	base := filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host")
	if root == "" {
		root = filepath.Join(base, "root")
	}
	path := strings.Join(append([]string{filepath.Join(base, "bin")}, extraPath...), ":")
	env = append([]string{"HOME=" + t.TempDir(), "FAKEHOST_ROCMINFO=" + testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt")}, env...)
	return host.New(root, path, env)
}

// gitDir is a PATH dir holding only the real git, so no other real tool leaks in.
func gitDir(t *testing.T) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	d := t.TempDir()
	if err := os.Symlink(git, filepath.Join(d, "git")); err != nil {
		t.Fatal(err)
	}
	return d
}

// checkout is a real git repository with the overlay's UPSTREAM file (copied from the
// fixture at test time).
func checkout(t *testing.T) (dir, commit string) {
	t.Helper()
	dir = t.TempDir()
	up, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(UpstreamPath))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, up, 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "init", "-q")
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "overlay")
	return dir, gittest.Git(t, dir, "rev-parse", "HEAD")
}

// On the fake host with a real checkout every fact is known, except rustc, which the
// fake host does not have: that one says why.
func TestCollectFakeHost(t *testing.T) {
	t.Parallel()
	repo, commit := checkout(t)
	in := Collect(context.Background(), fakeHost(t, "", nil, gitDir(t)), repo)
	want := map[string]string{
		"ROCm":             "10.0.0",
		"HIP":              "7.15.26333-abcdef",
		"GPU":              "Radeon 8060S Graphics",
		"gfx target":       "gfx1151",
		"compute units":    "40",
		"VRAM":             "96 GiB",
		"host memory":      "31.1 GiB",
		"kernel":           "6.12.48+deb13-amd64",
		"OS":               "Debian GNU/Linux 13 (trixie)",
		"rocprofv3":        "rocprofv3 1.3.5 (git 6b0e43f3)",
		"rocprofv3 flags":  "--hip-graph-trace, -f, --output-format",
		"mlxcel commit":    commit,
		"mlxcel tree":      "clean",
		"MLX ROCm overlay": "75915908dfe5028335d318b10340313744fd3a8d (rocm-support)",
		"rustc":            "unknown: rustc not found on PATH",
	}
	got := map[string]string{}
	for _, r := range in.Table() {
		got[r.Name] = r.Value
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("table (-want +got):\n%s", d)
	}
	if in.HIPShort() != "7.15.26333" || in.ROCmFile != "/opt/rocm/core-10.0/.info/version" || in.VRAMBytes != 96<<30 {
		t.Errorf("HIPShort %q, ROCmFile %q, VRAMBytes %d", in.HIPShort(), in.ROCmFile, in.VRAMBytes)
	}
	if !in.Rocprof.Known || !in.Rocprof.HIPGraphTrace || in.Rocprof.FormatFlag() != "-f" {
		t.Errorf("rocprof flags %+v", in.Rocprof)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"rustc":{"unknown":"rustc not found on PATH"}`) || !strings.Contains(s, `"gfx_target":{"value":"gfx1151"}`) {
		t.Errorf("json = %s", s)
	}
}

// Variations of the host: each one changes what is known, never crashes.
func TestCollectVariations(t *testing.T) {
	t.Parallel()
	legacy := t.TempDir()
	if err := os.MkdirAll(filepath.Join(legacy, "opt/rocm/.info"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(legacy, "opt/rocm/.info/version"), []byte("6.4.1-1.120\n"), 0o644)
	rustDir := t.TempDir()
	os.WriteFile(filepath.Join(rustDir, "rustc"), []byte("#!/bin/sh\necho 'rustc 1.86.0 (05f9846f8 2025-03-31)'\n"), 0o755)
	dirty, _ := checkout(t)
	os.WriteFile(filepath.Join(dirty, filepath.FromSlash(UpstreamPath)), []byte("branch: x\n"), 0o644)

	cases := []struct {
		name string
		h    func(t *testing.T) host.Host
		repo string
		want map[string]string
	}{
		{"legacy ROCm layout", func(t *testing.T) host.Host { return fakeHost(t, legacy, nil) }, "", map[string]string{
			"ROCm":          "6.4.1-1.120",
			"VRAM":          "unknown: no /sys/class/drm/card*/device/mem_info_vram_total (amdgpu driver not loaded?)",
			"host memory":   "unknown: reading /proc/meminfo: no such file or directory",
			"mlxcel commit": "unknown: no mlxcel checkout given",
		}},
		{"old rocprofv3", func(t *testing.T) host.Host {
			return fakeHost(t, "", []string{"FAKEHOST_ROCPROFV3_HELP=old"})
		}, "", map[string]string{"rocprofv3 flags": "--output-format"}},
		{"rocminfo fails", func(t *testing.T) host.Host {
			return fakeHost(t, "", []string{"FAKEHOST_ROCMINFO="})
		}, "", map[string]string{
			"GPU":        "unknown: rocminfo failed (exit status 1): ROCk module is NOT loaded, possibly no GPU devices",
			"gfx target": "unknown: rocminfo failed (exit status 1): ROCk module is NOT loaded, possibly no GPU devices",
		}},
		{"rustc and a dirty checkout", func(t *testing.T) host.Host { return fakeHost(t, "", nil, rustDir, gitDir(t)) }, dirty, map[string]string{
			"rustc":            "rustc 1.86.0 (05f9846f8 2025-03-31)",
			"mlxcel tree":      "dirty (1 tracked files changed)",
			"MLX ROCm overlay": "unknown: src/lib/mlx-cpp/patches-rocm/UPSTREAM has no commit: line",
		}},
		{"nothing at all", func(t *testing.T) host.Host { return host.New(t.TempDir(), "", nil) }, t.TempDir(), map[string]string{
			"ROCm":             "unknown: no /opt/rocm/.info/version nor /opt/rocm/core-*/.info/version (ROCm not installed?)",
			"HIP":              "unknown: hipconfig not found on PATH",
			"GPU":              "unknown: rocminfo not found on PATH",
			"kernel":           "unknown: reading /proc/sys/kernel/osrelease: no such file or directory",
			"OS":               "unknown: reading /etc/os-release: no such file or directory",
			"rocprofv3":        "unknown: rocprofv3 not found on PATH",
			"rocprofv3 flags":  "unknown: rocprofv3 not found on PATH",
			"mlxcel commit":    "unknown: git not found on PATH",
			"MLX ROCm overlay": "unknown: reading src/lib/mlx-cpp/patches-rocm/UPSTREAM: no such file or directory",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := Collect(context.Background(), tc.h(t), tc.repo)
			got := map[string]string{}
			for _, r := range in.Table() {
				got[r.Name] = r.Value
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// The gfx1151 APU's peak comes with its source; another target is unknown.
func TestPeakBandwidthOf(t *testing.T) {
	t.Parallel()
	b, ok := PeakBandwidthOf("gfx1151")
	if !ok || b.GBps != 256 || !strings.Contains(b.Source, "LPDDR5X-8000 on a 256-bit bus") {
		t.Errorf("gfx1151: %+v %v", b, ok)
	}
	for _, gfx := range []string{"gfx1201", "gfx942", ""} {
		if b, ok := PeakBandwidthOf(gfx); ok {
			t.Errorf("%q: %+v", gfx, b)
		}
	}
}
