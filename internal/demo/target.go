package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/internal/sampletree"
	"github.com/lablup/perfbot/runner/synth"
)

// sampleModels are the config's model names with the synthesizer's families.
var sampleModels = []struct{ name, family string }{
	{"llama", "llama"}, {"qwen3", "qwen3-moe"}, {"granite", "granite-hybrid"}, {"nemotron", "nemotron-hybrid"},
}

// target is the sample repository: a bare remote standing in for github.com's copy,
// its default branch's head, and an open pull request's branch.
type target struct {
	bare     string
	main     string // main's head
	prBranch string
	prHead   string
}

// gitEnv isolates git from the machine's configuration: the demo must behave the same
// for everyone.
func gitEnv(home string) []string {
	env := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME=mlxcel maintainer", "GIT_AUTHOR_EMAIL=maintainer@example.invalid",
		"GIT_COMMITTER_NAME=mlxcel maintainer", "GIT_COMMITTER_EMAIL=maintainer@example.invalid",
		"GIT_AUTHOR_DATE=2026-09-30T12:00:00Z", "GIT_COMMITTER_DATE=2026-09-30T12:00:00Z"}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "PATH" || k == "TMPDIR" || k == "LANG" {
			env = append(env, kv)
		}
	}
	return env
}

func runGit(ctx context.Context, home, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// layTarget writes the sample checkout under dir, commits it on main, adds a pull
// request branch with one more commit, and makes dir/mlxcel.git its bare remote.
//
// A change, when given, is committed in the pull request's head as fake-change.txt.
func layTarget(ctx context.Context, home, dir, change string) (target, error) {
	seed := filepath.Join(dir, "seed")
	if err := os.MkdirAll(seed, 0o755); err != nil {
		return target{}, err
	}
	err := sampletree.Write(seed)
	if err != nil {
		return target{}, err
	}
	for _, m := range sampleModels {
		dirName, err := synth.ModelDirName(m.family)
		if err != nil {
			return target{}, err
		}
		cfg, err := synth.ModelConfig(m.family)
		if err != nil {
			return target{}, err
		}
		if err := writeFile(filepath.Join(seed, "models", "mlx", dirName, "config.json"), cfg); err != nil {
			return target{}, err
		}
	}
	steps := [][]string{
		{"init", "--quiet", "--initial-branch=main", "."},
		{"add", "-A"},
		{"commit", "--quiet", "-m", "mlxcel: ROCm backend with the grouped_gemm gates"},
	}
	for _, s := range steps {
		if _, err := runGit(ctx, home, seed, s...); err != nil {
			return target{}, err
		}
	}
	t := target{bare: filepath.Join(dir, "mlxcel.git"), prBranch: "rocm-ssm-update-kernel"}
	if t.main, err = runGit(ctx, home, seed, "rev-parse", "HEAD"); err != nil {
		return target{}, err
	}
	if _, err := runGit(ctx, home, seed, "checkout", "--quiet", "-b", t.prBranch); err != nil {
		return target{}, err
	}
	if err := writeFile(filepath.Join(seed, "src", "lib", "mlxcel-core", "src", "ssm_update.rs"), []byte("// The fused SSM state update for the ROCm backend.\npub fn ssm_update() {}\n")); err != nil {
		return target{}, err
	}
	if change != "" {
		if err := writeFile(filepath.Join(seed, "fake-change.txt"), []byte(change)); err != nil {
			return target{}, err
		}
	}
	for _, s := range [][]string{{"add", "-A"}, {"commit", "--quiet", "-m", "rocm: fused SSM state update"}} {
		if _, err := runGit(ctx, home, seed, s...); err != nil {
			return target{}, err
		}
	}
	if t.prHead, err = runGit(ctx, home, seed, "rev-parse", "HEAD"); err != nil {
		return target{}, err
	}
	if _, err := runGit(ctx, home, dir, "clone", "--quiet", "--bare", seed, t.bare); err != nil {
		return target{}, err
	}
	return t, os.RemoveAll(seed)
}

func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}
