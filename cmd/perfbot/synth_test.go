package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/synth"
)

func TestSynthCommandWritesARun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "runs")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"synth", "--model", "granite-hybrid", "--tokens", "4", "--warmup", "1",
		"--sampling", "t0.7-p0.95", "--layout", "rocpd-csv", "--straddlers", "2", "--seed", "7", "--out", dir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	run := "granite-4.0-h-tiny-4bit_t0.7-p0.95"
	if !strings.HasPrefix(stdout.String(), run+": ") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	for _, f := range []string{"out_kernel_trace.csv", run + "_kernel_stats.csv", run + "_agent_info.csv", run + "_bench.log",
		run + "_plain_bench.log", run + "_truth.json", "granite-4.0-h-tiny-4bit/config.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	tr, err := synth.ReadTruth(filepath.Join(dir, run+"_truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Straddlers != 2 || tr.Seed != 7 || tr.Layout != "rocpd-csv" || tr.GeneratedTokens != 4 {
		t.Errorf("truth does not reflect the flags: %+v", tr)
	}
}

func TestSynthCommandRejectsBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no model", []string{"--out", "X"}, 2, "--model is required"},
		{"no out", []string{"--model", "llama"}, 2, "--out is required"},
		{"unknown model", []string{"--model", "gpt2", "--out", "X"}, 2, `unknown model "gpt2"`},
		{"bad sampling", []string{"--model", "llama", "--sampling", "p0.9", "--out", "X"}, 2, "--sampling"},
		{"bad layout", []string{"--model", "llama", "--layout", "6.3", "--out", "X"}, 2, `layout "6.3"`},
		{"one token", []string{"--model", "llama", "--tokens", "1", "--out", "X"}, 2, "--tokens 1"},
		{"zero prompt", []string{"--model", "llama", "--prompt", "0", "--out", "X"}, 2, "--prompt 0"},
		{"bad noise", []string{"--model", "llama", "--noise", "lots", "--out", "X"}, 2, "invalid value"},
		{"big noise", []string{"--model", "llama", "--noise", "3", "--out", "X"}, 2, "noise 3"},
		{"bad clock", []string{"--model", "llama", "--clock-na", "both", "--out", "X"}, 2, `clock-na "both"`},
		{"offset off the window", []string{"--model", "llama", "--tokens", "3", "--warmup", "0", "--clock-na", "boottime",
			"--clock-offset", "9000000000", "--out", "X"}, 2, "clock offset"},
		{"stray argument", []string{"--model", "llama", "--out", "X", "extra"}, 2, `unexpected argument "extra"`},
		{"help", []string{"-h"}, 0, "usage: perfbot synth"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{"synth"}, c.args...)
			for i, a := range args {
				if a == "X" {
					args[i] = filepath.Join(dir, "out")
				}
			}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, &stdout, &stderr); code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, stderr.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
				t.Error("bad input still created the output folder")
			}
		})
	}
}
