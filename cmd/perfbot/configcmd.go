package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/config"
)

func init() {
	register(command{name: "config", summary: "check a repository's .github/perfbot.yml and the server settings offline, with the loaders' line-numbered errors", run: runConfig})
}

const configUsage = `check [FILE] [--server FILE]

examples:
  perfbot config check
  perfbot config check --server /etc/perfbot/serve.yml`

func runConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runGroup(ctx, "config", "subcommand", configUsage, []subcommand{{"check", runConfigCheck}}, args, stdout, stderr)
}

// runConfigCheck reads the files with the loaders perfbot itself uses (config.Load,
// server.LoadSettings), so it accepts and refuses exactly what they do, with their
// messages. It reads files only: nothing is asked of GitHub, no database is opened.
func runConfigCheck(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("config check", `[FILE] [--server FILE]

FILE is a repository's perfbot config (default: `+config.DefaultPath+` in the current
folder); with --server alone, only the server settings are checked. Every file is
checked; the exit code is 1 when any is refused. `+"`perfbot serve --check`"+` also checks
the App's key and the database.

examples:
  perfbot config check
  perfbot config check .github/perfbot.yml --server /etc/perfbot/serve.yml`, stderr)
	settings := fs.String("server", "", "check the server settings `FILE` of perfbot serve (docs/server.md)")
	// The config file may come before or after the flag.
	var files []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) > 1 {
		return usageError("give one config file, got %q", files)
	}
	if len(files) == 0 && *settings == "" {
		files = []string{config.DefaultPath}
	}
	failed := false
	for _, f := range files {
		if _, err := config.Load(f); err != nil {
			fmt.Fprintf(stderr, "perfbot config check: %v\n", err)
			failed = true
			continue
		}
		fmt.Fprintf(stdout, "%s: OK\n", f)
	}
	if *settings != "" {
		if _, err := server.LoadSettings(*settings); err != nil {
			fmt.Fprintf(stderr, "perfbot config check: %v\n", err)
			failed = true
		} else {
			fmt.Fprintf(stdout, "%s: OK\n", *settings)
		}
	}
	if failed {
		return &exitError{code: 1}
	}
	return nil
}
