package demo

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestLayTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	tg, err := layTarget(ctx, home, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.main) != 40 || len(tg.prHead) != 40 || tg.main == tg.prHead {
		t.Fatalf("target %+v", tg)
	}
	files, err := runGit(ctx, home, tg.bare, "ls-tree", "-r", "--name-only", "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".github/perfbot.yml", ".gitignore", "scripts/ci/check_kernel_port_dispatch.py",
		"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs", "models/mlx/granite-4.0-h-tiny-4bit/config.json"} {
		if !slices.Contains(strings.Split(files, "\n"), want) {
			t.Errorf("main lacks %s:\n%s", want, files)
		}
	}
}
