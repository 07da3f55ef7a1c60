package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/hostinfo"
)

func init() {
	register(command{name: "hostinfo", summary: "print the host facts of a report (ROCm, HIP, GPU, memory, rocprofv3, mlxcel)", run: runHostinfo})
}

func runHostinfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("hostinfo", "[--json] [--repo DIR] [--root DIR]\n\nexamples:\n  perfbot hostinfo --repo mlxcel\n  perfbot hostinfo --json --repo \"\"", stderr)
	asJSON := fs.Bool("json", false, "print JSON: each fact as {\"value\": ...} or {\"unknown\": reason}")
	repo := fs.String("repo", ".", "the mlxcel checkout (commit, dirty state, overlay UPSTREAM); empty for none")
	root := fs.String("root", "/", "read host files under `DIR` instead of / (a fake host); tools still come from $PATH")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
		return usageError("--root %s is not a directory", *root)
	}
	h := host.New(*root, os.Getenv("PATH"), os.Environ())
	in := hostinfo.Collect(ctx, h, *repo)
	if *asJSON {
		b, err := json.MarshalIndent(in, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding host facts: %w", err)
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	rows := in.Table()
	width := 0
	for _, r := range rows {
		width = max(width, len(r.Name))
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s  %s\n", width, r.Name, r.Value)
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}
