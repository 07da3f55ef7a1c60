package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/lablup/perfbot/bot/server"
)

func init() {
	register(command{name: "serve", summary: "run the GitHub App's webhook server: inbox, gate, per-host queues, dispatch", run: runServe})
}

// serveOptions are `perfbot serve`'s inputs.
type serveOptions struct {
	config string
	secret []byte
	debug  bool
	logs   io.Writer
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "--config FILE", stderr)
	cfg := fs.String("config", "", "the server settings `FILE` (docs/server.md); the webhook secret comes from the environment ("+server.DefaultSecretEnv+" unless the file names another variable)")
	debug := fs.Bool("debug", false, "log debug lines too (ignored comments, unhandled events)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if *cfg == "" {
		return usageError("--config FILE is required")
	}
	return serve(ctx, serveOptions{config: *cfg, debug: *debug, logs: stderr})
}

func serve(ctx context.Context, o serveOptions) error {
	set, err := server.LoadSettings(o.config)
	if err != nil {
		return err
	}
	if o.secret == nil {
		o.secret = []byte(os.Getenv(set.SecretEnv))
	}
	level := slog.LevelInfo
	if o.debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewJSONHandler(o.logs, &slog.HandlerOptions{Level: level}))
	srv, err := server.New(ctx, set, server.Options{Secret: o.secret, Logger: log})
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}
