// Package hostinfo owns the environment table of docs/formats.md §5: ROCm and HIP versions,
// the GPU and its gfx target, VRAM and host memory, kernel and OS, the installed
// rocprofv3 and the flags it supports, the mlxcel checkout (commit, dirty state, MLX
// ROCm overlay commit) and rustc, and the peak memory bandwidth of the gfx targets whose memory it
// knows (PeakBandwidthOf). Every fact is a value or "unknown: <reason>"; a
// missing tool never fails the collection. It reads the machine only through
// runner/host, and must not run anything while a guard waits for an idle GPU (rocminfo
// opens /dev/kfd and counts as a GPU holder): callers probe before the idle wait.
package hostinfo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/runner/host"
)

// ProbeTimeout bounds each external probe, so a wedged driver cannot hang a report.
const ProbeTimeout = 30 * time.Second

// UpstreamPath is the overlay's provenance file inside an mlxcel checkout.
const UpstreamPath = "src/lib/mlx-cpp/patches-rocm/UPSTREAM"

// Fact is one value of the table, or the reason it is unknown.
type Fact struct {
	Value  string `json:"value,omitempty"`
	Reason string `json:"unknown,omitempty"`
}

func known(v string) Fact              { return Fact{Value: v} }
func unknown(r string) Fact            { return Fact{Reason: r} }
func unknownf(f string, a ...any) Fact { return Fact{Reason: fmt.Sprintf(f, a...)} }

// Known reports whether the fact has a value.
func (f Fact) Known() bool { return f.Value != "" }

// String is the value, or "unknown: <reason>".
func (f Fact) String() string {
	if f.Known() {
		return f.Value
	}
	return "unknown: " + f.Reason
}

// RocprofFlags says which of the version-dependent rocprofv3 flags the installed one
// lists in its --help (docs/formats.md §1.1).
type RocprofFlags struct {
	Known         bool `json:"known"`           // --help could be read
	HIPGraphTrace bool `json:"hip_graph_trace"` // rocprofiler-sdk 1.3.0+ (ROCm 7.13+)
	ShortFormat   bool `json:"short_format"`    // -f, ROCm 7.0+
	OutputFormat  bool `json:"output_format"`   // --output-format, every version
}

// FormatFlag is the flag to ask for csv with: `-f` when listed, else `--output-format`.
func (r RocprofFlags) FormatFlag() string {
	if r.ShortFormat {
		return "-f"
	}
	return "--output-format"
}

// Agent is one HSA agent block of rocminfo.
type Agent struct {
	Name          string // gfx target for a GPU ("gfx1151"), the CPU name for a CPU
	MarketingName string
	VendorName    string
	DeviceType    string // "CPU" or "GPU"
	ComputeUnits  int
}

// Info is the environment of one host, as plain values.
type Info struct {
	ROCm            Fact              `json:"rocm_version"`
	ROCmFile        string            `json:"rocm_version_file,omitempty"`
	HIP             Fact              `json:"hip_version"`
	GPU             Fact              `json:"gpu"`
	GFX             Fact              `json:"gfx_target"`
	ComputeUnits    Fact              `json:"compute_units"`
	VRAM            Fact              `json:"vram"`
	VRAMBytes       int64             `json:"vram_bytes,omitempty"`
	HostMemory      Fact              `json:"host_memory"`
	HostMemoryBytes int64             `json:"host_memory_bytes,omitempty"`
	Kernel          Fact              `json:"kernel"`
	OS              Fact              `json:"os"`
	RocprofVersion  Fact              `json:"rocprofv3_version"`
	RocprofFlags    Fact              `json:"rocprofv3_flags"`
	Rocprof         RocprofFlags      `json:"rocprofv3"`
	MlxcelCommit    Fact              `json:"mlxcel_commit"`
	MlxcelTree      Fact              `json:"mlxcel_tree"`
	OverlayCommit   Fact              `json:"overlay_commit"`
	Overlay         map[string]string `json:"overlay,omitempty"` // every UPSTREAM key
	Rustc           Fact              `json:"rustc"`
}

// HIPShort is the HIP version as the benchmark CSVs' hip_version column holds it: the
// part before '-' (7.15.26333-abcdef -> 7.15.26333); "" when unknown.
func (i Info) HIPShort() string {
	v, _, _ := strings.Cut(i.HIP.Value, "-")
	return v
}

// Row is one line of the environment table.
type Row struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Table is the environment table of a report, unknown facts included with their reason.
func (i Info) Table() []Row {
	overlay := i.OverlayCommit
	if overlay.Known() && i.Overlay["branch"] != "" {
		overlay.Value += " (" + i.Overlay["branch"] + ")"
	}
	return []Row{
		{"ROCm", i.ROCm.String()},
		{"HIP", i.HIP.String()},
		{"GPU", i.GPU.String()},
		{"gfx target", i.GFX.String()},
		{"compute units", i.ComputeUnits.String()},
		{"VRAM", i.VRAM.String()},
		{"host memory", i.HostMemory.String()},
		{"kernel", i.Kernel.String()},
		{"OS", i.OS.String()},
		{"rocprofv3", i.RocprofVersion.String()},
		{"rocprofv3 flags", i.RocprofFlags.String()},
		{"mlxcel commit", i.MlxcelCommit.String()},
		{"mlxcel tree", i.MlxcelTree.String()},
		{"MLX ROCm overlay", overlay.String()},
		{"rustc", i.Rustc.String()},
	}
}

// Collect gathers the facts of host h and of the mlxcel checkout at repoDir (a real
// path; "" when there is none). It never fails: what cannot be read is unknown.
func Collect(ctx context.Context, h host.Host, repoDir string) Info {
	var in Info
	in.ROCm, in.ROCmFile = rocmVersion(h)
	if out, f := probe(ctx, h, "hipconfig", "--version"); f.Reason != "" {
		in.HIP = f
	} else if v := strings.TrimSpace(out); v != "" {
		in.HIP = known(v)
	} else {
		in.HIP = unknown("hipconfig --version printed nothing")
	}
	in.gpu(ctx, h)
	in.VRAM, in.VRAMBytes = vram(h)
	in.HostMemory, in.HostMemoryBytes = hostMemory(h)
	in.Kernel = firstLine(h, "/proc/sys/kernel/osrelease")
	in.OS = osName(h)
	in.rocprof(ctx, h)
	in.repo(ctx, h, repoDir)
	if out, f := probe(ctx, h, "rustc", "--version"); f.Reason != "" {
		in.Rustc = f
	} else {
		in.Rustc = known(strings.TrimSpace(firstNonEmpty(out)))
	}
	return in
}

// probe runs one tool and returns its stdout, or an unknown fact that says why not.
func probe(ctx context.Context, h host.Host, name string, args ...string) (string, Fact) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	cmd := h.Command(ctx, name, args...)
	if cmd.Err != nil {
		if errors.Is(cmd.Err, exec.ErrNotFound) {
			return "", unknownf("%s not found on PATH", name)
		}
		return "", unknownf("%s: %v", name, cmd.Err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	call := strings.TrimSpace(name + " " + strings.Join(args, " "))
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return "", unknownf("%s timed out after %s", call, ProbeTimeout)
	case err != nil:
		msg := firstNonEmpty(stderr.String())
		if msg == "" {
			msg = firstNonEmpty(stdout.String())
		}
		if msg != "" {
			return "", unknownf("%s failed (%v): %s", call, err, msg)
		}
		return "", unknownf("%s failed: %v", call, err)
	}
	return stdout.String(), Fact{}
}

func firstNonEmpty(s string) string {
	for _, ln := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(ln); t != "" {
			if len(t) > 200 {
				t = t[:200]
			}
			return t
		}
	}
	return ""
}

func firstLine(h host.Host, p string) Fact {
	b, err := h.ReadFile(p)
	if err != nil {
		return unknownf("reading %s: %v", p, pathErr(err))
	}
	if v := firstNonEmpty(string(b)); v != "" {
		return known(v)
	}
	return unknownf("%s is empty", p)
}

// pathErr drops the real (rooted) path from an error: the host path is already said.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// rocmVersion reads the first line of the version file of either install layout.
func rocmVersion(h host.Host) (Fact, string) {
	candidates := []string{"/opt/rocm/.info/version"}
	if m, err := h.Glob("/opt/rocm/core-*/.info/version"); err == nil {
		// The newest core-* first (core-10.0 after core-9.x, numerically).
		sort.Slice(m, func(i, j int) bool { return versionLess(m[j], m[i]) })
		candidates = append(candidates, m...)
	}
	for _, p := range candidates {
		if f := firstLine(h, p); f.Known() {
			return f, p
		}
	}
	return unknown("no /opt/rocm/.info/version nor /opt/rocm/core-*/.info/version (ROCm not installed?)"), ""
}

var numRE = regexp.MustCompile(`\d+`)

// versionLess compares strings by their embedded numbers, then as text.
func versionLess(a, b string) bool {
	na, nb := numRE.FindAllString(a, -1), numRE.FindAllString(b, -1)
	for i := 0; i < len(na) && i < len(nb); i++ {
		x, _ := strconv.Atoi(na[i])
		y, _ := strconv.Atoi(nb[i])
		if x != y {
			return x < y
		}
	}
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	return a < b
}

func (in *Info) gpu(ctx context.Context, h host.Host) {
	out, f := probe(ctx, h, "rocminfo")
	if f.Reason != "" {
		in.GPU, in.GFX, in.ComputeUnits = f, f, f
		return
	}
	agents, err := ParseRocminfo(strings.NewReader(out))
	if err != nil {
		f := unknownf("reading rocminfo output: %v", err)
		in.GPU, in.GFX, in.ComputeUnits = f, f, f
		return
	}
	for _, a := range agents {
		if a.DeviceType != "GPU" {
			continue
		}
		in.GPU = known(a.MarketingName)
		if a.MarketingName == "" {
			in.GPU = unknown("rocminfo GPU agent has no Marketing Name")
		}
		in.GFX = known(a.Name)
		in.ComputeUnits = known(strconv.Itoa(a.ComputeUnits))
		if a.ComputeUnits == 0 {
			in.ComputeUnits = unknown("rocminfo GPU agent has no Compute Unit line")
		}
		return
	}
	f = unknownf("rocminfo lists no GPU agent (%d agents)", len(agents))
	in.GPU, in.GFX, in.ComputeUnits = f, f, f
}

// ParseRocminfo reads rocminfo's agent blocks. Agent fields have two leading spaces
// (deeper lines, like the ISA's own Name:, belong to sub-blocks) and padded values.
func ParseRocminfo(r io.Reader) ([]Agent, error) {
	var agents []Agent
	var cur *Agent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if strings.HasPrefix(line, "Agent ") {
			agents = append(agents, Agent{})
			cur = &agents[len(agents)-1]
			continue
		}
		if cur == nil || !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			continue
		}
		k, v, ok := strings.Cut(line[2:], ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "Name":
			cur.Name = v
		case "Marketing Name":
			cur.MarketingName = v
		case "Vendor Name":
			cur.VendorName = v
		case "Device Type":
			cur.DeviceType = v
		case "Compute Unit":
			cur.ComputeUnits, _ = strconv.Atoi(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(agents) == 0 {
		return nil, errors.New("no `Agent N` blocks")
	}
	return agents, nil
}

// vram reads the largest mem_info_vram_total of the DRM cards.
func vram(h host.Host) (Fact, int64) {
	const pattern = "/sys/class/drm/card*/device/mem_info_vram_total"
	m, err := h.Glob(pattern)
	if err != nil || len(m) == 0 {
		return unknownf("no %s (amdgpu driver not loaded?)", pattern), 0
	}
	var best int64
	var reasons []string
	for _, p := range m {
		b, err := h.ReadFile(p)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("reading %s: %v", p, pathErr(err)))
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("%s: %q is not a byte count", p, strings.TrimSpace(string(b))))
			continue
		}
		best = max(best, n)
	}
	if best == 0 {
		return unknown(strings.Join(reasons, "; ")), 0
	}
	return known(GiB(best)), best
}

// GiB prints a byte count in GiB: whole numbers bare ("96 GiB"), else one decimal.
func GiB(n int64) string {
	g := float64(n) / (1 << 30)
	if n%(1<<30) == 0 {
		return strconv.FormatInt(n>>30, 10) + " GiB"
	}
	return strconv.FormatFloat(g, 'f', 1, 64) + " GiB"
}

func hostMemory(h host.Host) (Fact, int64) {
	b, err := h.ReadFile("/proc/meminfo")
	if err != nil {
		return unknownf("reading /proc/meminfo: %v", pathErr(err)), 0
	}
	n, err := ParseMemTotal(b)
	if err != nil {
		return unknownf("/proc/meminfo: %v", err), 0
	}
	return known(GiB(n)), n
}

// ParseMemTotal returns MemTotal of /proc/meminfo in bytes.
func ParseMemTotal(meminfo []byte) (int64, error) {
	for _, ln := range strings.Split(string(meminfo), "\n") {
		rest, ok := strings.CutPrefix(ln, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("MemTotal %q is not a number", f[0])
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n, nil
	}
	return 0, errors.New("no MemTotal line")
}

func osName(h host.Host) Fact {
	b, err := h.ReadFile("/etc/os-release")
	if err != nil {
		return unknownf("reading /etc/os-release: %v", pathErr(err))
	}
	vals := map[string]string{}
	for _, ln := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(ln), "=")
		if !ok {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else {
			v = strings.Trim(v, `'"`)
		}
		vals[k] = v
	}
	for _, k := range []string{"PRETTY_NAME", "NAME"} {
		if vals[k] != "" {
			return known(vals[k])
		}
	}
	return unknown("/etc/os-release has no PRETTY_NAME or NAME")
}

func (in *Info) rocprof(ctx context.Context, h host.Host) {
	if out, f := probe(ctx, h, "rocprofv3", "--version"); f.Reason != "" {
		in.RocprofVersion = f
	} else if v := firstNonEmpty(out); v != "" {
		in.RocprofVersion = known(v)
	} else {
		in.RocprofVersion = unknown("rocprofv3 --version printed nothing")
	}
	out, f := probe(ctx, h, "rocprofv3", "--help")
	if f.Reason != "" {
		in.RocprofFlags = f
		return
	}
	in.Rocprof = ParseRocprofHelp(out)
	var flags []string
	if in.Rocprof.HIPGraphTrace {
		flags = append(flags, "--hip-graph-trace")
	}
	if in.Rocprof.ShortFormat {
		flags = append(flags, "-f")
	}
	if in.Rocprof.OutputFormat {
		flags = append(flags, "--output-format")
	}
	if len(flags) == 0 {
		in.RocprofFlags = known("none of --hip-graph-trace, -f, --output-format")
		return
	}
	in.RocprofFlags = known(strings.Join(flags, ", "))
}

var (
	helpHIPGraph = regexp.MustCompile(`(?m)(^|[\s,\[])--hip-graph-trace([\s,=\]]|$)`)
	helpShortF   = regexp.MustCompile(`(?m)(^|[\s,\[])-f([\s,=\]{]|$)`)
	helpOutFmt   = regexp.MustCompile(`(?m)(^|[\s,\[])--output-format([\s,=\]{]|$)`)
)

// ParseRocprofHelp reads which version-dependent flags `rocprofv3 --help` lists.
func ParseRocprofHelp(help string) RocprofFlags {
	return RocprofFlags{
		Known:         true,
		HIPGraphTrace: helpHIPGraph.MatchString(help),
		ShortFormat:   helpShortF.MatchString(help),
		OutputFormat:  helpOutFmt.MatchString(help),
	}
}

func (in *Info) repo(ctx context.Context, h host.Host, dir string) {
	if dir == "" {
		f := unknown("no mlxcel checkout given")
		in.MlxcelCommit, in.MlxcelTree, in.OverlayCommit = f, f, f
		return
	}
	if out, f := probe(ctx, h, "git", "-C", dir, "rev-parse", "HEAD"); f.Reason != "" {
		in.MlxcelCommit = f
	} else {
		in.MlxcelCommit = known(strings.TrimSpace(out))
	}
	if out, f := probe(ctx, h, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no"); f.Reason != "" {
		in.MlxcelTree = f
	} else if changed := strings.TrimSpace(out); changed == "" {
		in.MlxcelTree = known("clean")
	} else {
		in.MlxcelTree = known(fmt.Sprintf("dirty (%d tracked files changed)", strings.Count(changed, "\n")+1))
	}
	p := filepath.Join(dir, filepath.FromSlash(UpstreamPath))
	b, err := os.ReadFile(p)
	if err != nil {
		in.OverlayCommit = unknownf("reading %s: %v", UpstreamPath, pathErr(err))
		return
	}
	up := ParseUpstream(b)
	in.Overlay = up
	if c := up["commit"]; c != "" {
		in.OverlayCommit = known(c)
	} else {
		in.OverlayCommit = unknownf("%s has no commit: line", UpstreamPath)
	}
}

// ParseUpstream reads the overlay's UPSTREAM file: `key: value` lines.
func ParseUpstream(b []byte) map[string]string {
	out := map[string]string{}
	for _, ln := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(ln, ":")
		if !ok || strings.TrimSpace(k) == "" || strings.ContainsAny(strings.TrimSpace(k), " \t") {
			continue
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

// PeakBandwidth is a device's peak memory bandwidth: the roofline decode is measured
// against.
type PeakBandwidth struct {
	GBps   float64 // 10^9 bytes per second
	Source string  // where the figure comes from
}

// peakBandwidth holds the devices whose gfx target fixes their memory: an APU's
// target names one memory system. Discrete cards are left out: one target covers
// boards with different buses.
var peakBandwidth = map[string]PeakBandwidth{
	"gfx1151": {GBps: 256, Source: "Strix Halo (Ryzen AI Max 300 series): LPDDR5X-8000 on a 256-bit bus, 8000 MT/s x 32 bytes = 256 GB/s (AMD's product specifications)"},
}

// PeakBandwidthOf returns the peak memory bandwidth of a gfx target, and false for a
// target whose bandwidth perfbot does not know.
func PeakBandwidthOf(gfx string) (PeakBandwidth, bool) {
	b, ok := peakBandwidth[strings.ToLower(strings.TrimSpace(gfx))]
	return b, ok
}
