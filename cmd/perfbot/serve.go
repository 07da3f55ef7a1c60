package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/internal/infile"
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
	fs := newFlags("serve", `--config FILE [--check] [--debug]

examples:
  perfbot serve --config /etc/perfbot/serve.yml --check
  perfbot serve --config /etc/perfbot/serve.yml`, stderr)
	cfg := fs.String("config", "", "the server settings `FILE` (docs/server.md); the webhook secret comes from the environment ("+server.DefaultSecretEnv+" unless the file names another variable)")
	debug := fs.Bool("debug", false, "log debug lines too (ignored comments, unhandled events)")
	check := fs.Bool("check", false, "check the settings, the webhook secret, the App's key (parsed, not sent) and the database (opened, locked, written, released) without listening or asking GitHub, one line per item; exit 1 at the first failure")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if *cfg == "" {
		return usageError("--config FILE is required")
	}
	if *check {
		return serveCheck(ctx, *cfg, os.Getenv, stdout)
	}
	return serve(ctx, serveOptions{config: *cfg, debug: *debug, logs: stderr})
}

// serveCheck checks, in the order `perfbot serve` meets them, what would stop the
// server from starting and can be told offline: the settings file, the webhook secret,
// the App's private key and the database. It prints "OK" per item and stops at the
// first failure with the error the server would give. GitHub is not asked: whether it
// accepts the key is only known by asking, which `perfbot serve` does at start.
func serveCheck(ctx context.Context, path string, getenv func(string) string, stdout io.Writer) error {
	set, err := server.LoadSettings(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "settings %s: OK (%d host(s), listen %s)\n", path, len(set.Hosts), set.Listen)

	secret := getenv(set.SecretEnv)
	switch {
	case secret == "":
		return fmt.Errorf("the webhook secret is empty: set the environment variable %s to the secret on the App's settings page", set.SecretEnv)
	case strings.TrimSpace(secret) == "":
		return fmt.Errorf("the webhook secret is only white space (%d bytes): set the environment variable %s to the secret on the App's settings page", len(secret), set.SecretEnv)
	}
	fmt.Fprintf(stdout, "webhook secret %s: OK (%d bytes)\n", set.SecretEnv, len(secret))

	key, err := infile.ReadFile(set.KeyFile, maxAppKeyBytes)
	if err != nil {
		return fmt.Errorf("reading the App's private key (github.private_key_file): %w", err)
	}
	// Parsing the key is all NewAppTransport does; nothing is sent.
	if _, err := gh.NewAppTransport(gh.AppAuth{AppID: set.AppID, PrivateKeyPEM: key}, gh.Options{BaseURL: set.APIURL}); err != nil {
		return fmt.Errorf("github.private_key_file %s: %w", set.KeyFile, err)
	}
	fmt.Fprintf(stdout, "private key %s: OK (app %d; GitHub is asked at start)\n", set.KeyFile, set.AppID)

	db, err := store.Open(ctx, set.Database)
	if err != nil {
		return err
	}
	werr := db.Writable(ctx)
	if cerr := db.Close(); werr == nil && cerr != nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("the database %s cannot be written: %w", set.Database, werr)
	}
	fmt.Fprintf(stdout, "database %s: OK (opened, locked, written and released)\n", set.Database)
	return nil
}

// maxAppKeyBytes bounds the read of the App's private key, as the server does.
const maxAppKeyBytes = 64 << 10

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
