package rocprof

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// touch creates empty files (and their folders) under dir.
func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindOutputs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		files  []string
		prefix string
		want   Outputs // paths relative to the dir
		errHas string
	}{
		{
			name:   "run prefix with underscores",
			files:  []string{"Qwen3-30B-A3B-4bit_greedy_kernel_trace.csv", "Qwen3-30B-A3B-4bit_greedy_kernel_stats.csv", "Qwen3-30B-A3B-4bit_greedy_agent_info.csv", "Qwen3-30B-A3B-4bit_greedy_domain_stats.csv", "other-run_kernel_trace.csv", "notes.txt"},
			prefix: "Qwen3-30B-A3B-4bit_greedy",
			want: Outputs{KernelTrace: "Qwen3-30B-A3B-4bit_greedy_kernel_trace.csv", KernelStats: "Qwen3-30B-A3B-4bit_greedy_kernel_stats.csv",
				AgentInfo: "Qwen3-30B-A3B-4bit_greedy_agent_info.csv", Other: map[string]string{"domain_stats": "Qwen3-30B-A3B-4bit_greedy_domain_stats.csv"}},
		},
		{
			name:   "no kernel dispatched: no trace file",
			files:  []string{"run_agent_info.csv"},
			prefix: "run",
			want:   Outputs{AgentInfo: "run_agent_info.csv", Other: map[string]string{}},
		},
		{
			name:  "rocm 6.3+ default prefix: host folder and pid",
			files: []string{"myhost/4242_kernel_trace.csv", "myhost/4242_kernel_stats.csv", "myhost/4242_agent_info.csv", "myhost/4242_hip_api_stats.csv"},
			want: Outputs{KernelTrace: "myhost/4242_kernel_trace.csv", KernelStats: "myhost/4242_kernel_stats.csv", AgentInfo: "myhost/4242_agent_info.csv",
				Other: map[string]string{"hip_api_stats": "myhost/4242_hip_api_stats.csv"}},
		},
		{
			name:   "prefix with a folder part",
			files:  []string{"myhost/4242_kernel_trace.csv", "myhost/4243_kernel_trace.csv"},
			prefix: "myhost/4242",
			want:   Outputs{KernelTrace: "myhost/4242_kernel_trace.csv", Other: map[string]string{}},
		},
		{
			name:  "rocm 6.2 default prefix: pid",
			files: []string{"977_kernel_trace.csv", "977_hsa_stats.csv", "results.json"},
			want:  Outputs{KernelTrace: "977_kernel_trace.csv", Other: map[string]string{"hsa_stats": "977_hsa_stats.csv"}},
		},
		{
			name:  "a child process without kernels beside the one with",
			files: []string{"h/100_agent_info.csv", "h/101_agent_info.csv", "h/101_kernel_trace.csv"},
			want:  Outputs{KernelTrace: "h/101_kernel_trace.csv", AgentInfo: "h/101_agent_info.csv", Other: map[string]string{}},
		},
		{
			name:   "two processes with kernels",
			files:  []string{"h/100_kernel_trace.csv", "h/101_kernel_trace.csv"},
			errHas: "files of several processes (h/100, h/101); pass the output prefix the profile used (-o)",
		},
		{
			name:   "rocpd-converted csv fills in for the missing trace",
			files:  []string{"run_agent_info.csv", "run_results.db", "rocpd-output-data/out_kernel_trace.csv", "rocpd-output-data/out_kernel_stats.csv"},
			prefix: "run",
			want: Outputs{KernelTrace: "rocpd-output-data/out_kernel_trace.csv", KernelStats: "rocpd-output-data/out_kernel_stats.csv",
				AgentInfo: "run_agent_info.csv", Other: map[string]string{}},
		},
		{
			name:  "rocpd-converted csv alone",
			files: []string{"out_kernel_trace.csv", "out_agent_info.csv"},
			want:  Outputs{KernelTrace: "out_kernel_trace.csv", AgentInfo: "out_agent_info.csv", Other: map[string]string{}},
		},
		{
			name:  "empty dir",
			files: nil,
			want:  Outputs{Other: map[string]string{}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			touch(t, dir, tc.files...)
			got, err := FindOutputs(dir, tc.prefix)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("got %v, want an error containing %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			abs := func(p string) string {
				if p == "" {
					return ""
				}
				return filepath.Join(dir, p)
			}
			want := Outputs{KernelTrace: abs(tc.want.KernelTrace), KernelStats: abs(tc.want.KernelStats), AgentInfo: abs(tc.want.AgentInfo), Other: map[string]string{}}
			for k, v := range tc.want.Other {
				want.Other[k] = abs(v)
			}
			diff(t, want, got)
		})
	}
}

func TestFindOutputsMissingDir(t *testing.T) {
	t.Parallel()
	_, err := FindOutputs(filepath.Join(t.TempDir(), "absent"), "run")
	if err == nil || !strings.HasPrefix(err.Error(), "listing trace dir: ") || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("got %v, want a wrapped not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestOpenedResultFiles(t *testing.T) {
	t.Parallel()
	stderr := "W20260716 02:19:55.1 1 tool.cpp:9] something else\r\n" +
		"E20260716 02:19:56.319983 126 output_stream.cpp:111] Opened result file: /data/run/run_kernel_trace.csv\r\n" +
		"[mlx-rocm] bound HIP device 0: gfx1151\n" +
		"E20260716 02:19:56.4 126 output_stream.cpp:111] Opened result file: /data/run/run_kernel_stats.csv   \n" +
		"E20260716 02:19:56.5 126 output_stream.cpp:111] Opened result file: /data/run/run_kernel_trace.csv\n" +
		"E20260716 02:19:56.6 126 output_stream.cpp:111] Opened result file: /data/run/run_agent_info.csv"
	diff(t, []string{"/data/run/run_kernel_trace.csv", "/data/run/run_kernel_stats.csv", "/data/run/run_agent_info.csv"}, OpenedResultFiles([]byte(stderr)))
	if got := OpenedResultFiles([]byte("no profiler here\n")); got != nil {
		t.Errorf("got %q, want nil", got)
	}
}

// OpenedResultFiles reads every line, blank ones first or between included.
func TestOpenedResultFilesBlankLines(t *testing.T) {
	t.Parallel()
	got := OpenedResultFiles([]byte("\n\nW20261201 rocprofv3: Opened result file: /o/a_agent_info.csv\n\nOpened result file: /o/b.csv"))
	if len(got) != 2 || got[0] != "/o/a_agent_info.csv" || got[1] != "/o/b.csv" {
		t.Errorf("got %q", got)
	}
}

func TestIsDigits(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"": false, "0": true, "9": true, "4242": true, "42a": false, "a42": false, "4/2": false, "4:2": false, " 42": false} {
		if got := isDigits(s); got != want {
			t.Errorf("isDigits(%q) = %v, want %v", s, got, want)
		}
	}
}
