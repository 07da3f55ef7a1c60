// Package server is `perfbot serve`: the GitHub App's webhook server. It wires the
// ingress (bot/webhook), the durable inbox (bot/inbox) and its bounded worker pool,
// the gate's decision on each comment (bot/gate), the per-host request queues
// (bot/queue) and their dispatch of the profiling workflow, the sweep that recovers
// deliveries GitHub failed to make, and /healthz, /readyz and /metrics
// (docs/server.md).
//
// New is the one composition root and fails fast: an empty or white-space webhook
// secret, a key GitHub refuses, GitHub out of reach, or a database that cannot be
// written stop it with a message that says which. The package must not parse
// commands or decide permissions itself (the gate does), and must never log
// payloads, secrets or tokens.
package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/bot/webhook"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options are what the settings file does not hold.
type Options struct {
	// Secret is the webhook secret (from the environment). It must not be empty.
	Secret []byte
	// Logger receives JSON log lines; default: none.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// RetryBase is the first wait before a failed delivery is processed again; it
	// doubles per attempt up to RetryMax. Defaults 10 s and 15 min.
	RetryBase, RetryMax time.Duration
	// GitHub is passed to the API client (BaseURL and Logger are set from the settings).
	GitHub gh.Options
	// OnSettled, when set, is told each time a worker has finished with a delivery
	// (err is the processing error, nil when it is done). For tests and probes.
	OnSettled func(d inbox.Delivery, err error)
}

// Server is a configured perfbot server.
type Server struct {
	set      Settings
	o        Options
	log      *slog.Logger
	db       *store.DB
	inbox    *inbox.Inbox
	queue    *queue.Queue
	app      *gh.AppTransport
	info     gh.AppInfo
	reg      *prometheus.Registry
	m        *metrics
	ingress  *webhook.Handler
	pool     *pool
	hosts    map[string]Host
	handlers map[string]func(context.Context, inbox.Delivery) error

	mu      sync.Mutex
	clients map[int64]*gh.Client
	hostMu  map[string]*sync.Mutex
	pruned  time.Time // the last prune of old deliveries
	ready   readyCache
}

type readyCache struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// New checks the secret and the App's credentials with GitHub (GET /app), opens the
// database and wires the server. It does not listen yet.
func New(ctx context.Context, set Settings, o Options) (*Server, error) {
	if len(o.Secret) == 0 {
		return nil, fmt.Errorf("the webhook secret is empty: set the environment variable %s to the secret on the App's settings page", set.SecretEnv)
	}
	if len(bytes.TrimSpace(o.Secret)) == 0 {
		return nil, fmt.Errorf("the webhook secret is only white space (%d bytes): set the environment variable %s to the secret on the App's settings page", len(o.Secret), set.SecretEnv)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 10 * time.Second
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 15 * time.Minute
	}
	key, err := readBounded(set.KeyFile, 64<<10)
	if err != nil {
		return nil, fmt.Errorf("reading the App's private key (github.private_key_file): %w", err)
	}
	gho := o.GitHub
	gho.BaseURL, gho.Logger = set.APIURL, o.Logger
	app, err := gh.NewAppTransport(gh.AppAuth{AppID: set.AppID, PrivateKeyPEM: key}, gho)
	if err != nil {
		return nil, err
	}
	info, err := app.App(ctx)
	if err != nil {
		return nil, appCheckError(set, err)
	}
	db, err := store.Open(ctx, set.Database, inbox.Schema, queue.Schema)
	if err != nil {
		return nil, err
	}
	s := &Server{
		set: set, o: o, log: o.Logger, db: db, app: app, info: info,
		reg: prometheus.NewRegistry(), hosts: map[string]Host{},
		clients: map[int64]*gh.Client{}, hostMu: map[string]*sync.Mutex{},
	}
	fail := func(err error) (*Server, error) {
		db.Close()
		return nil, err
	}
	if err := db.Writable(ctx); err != nil {
		return fail(fmt.Errorf("the database %s cannot be written: %w", set.Database, err))
	}
	if s.inbox, err = inbox.New(ctx, db, o.Now); err != nil {
		return fail(err)
	}
	s.queue = queue.New(db, o.Now)
	var labels []string
	for _, h := range set.Hosts {
		s.hosts[h.Label] = h
		s.hostMu[h.Label] = &sync.Mutex{}
		labels = append(labels, h.Label)
	}
	s.m = newMetrics()
	for _, c := range append(s.m.collectors(), s.queue.Collector(labels),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})) {
		if err := s.reg.Register(c); err != nil {
			return fail(fmt.Errorf("registering metrics: %w", err))
		}
	}
	s.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "perfbot_inbox_backlog", Help: "Received deliveries not yet processed.",
	}, func() float64 { return float64(s.inbox.Pending()) }))
	s.handlers = map[string]func(context.Context, inbox.Delivery) error{
		"issue_comment": s.onComment,
		"workflow_run":  s.onWorkflowRun,
	}
	s.pool = newPool(s)
	handled := make([]string, 0, len(s.handlers))
	for e := range s.handlers {
		handled = append(handled, e)
	}
	s.ingress, err = webhook.New(webhook.Options{
		Secret: o.Secret, Store: s.inbox, Handled: handled,
		Admit:  func() bool { return s.inbox.Pending() < int64(set.Backlog) },
		Stored: func(d inbox.Delivery, _ inbox.Outcome) { s.pool.offer(d) },
		Logger: o.Logger, Registerer: s.reg,
	})
	if err != nil {
		return fail(err)
	}
	s.log.Info("server: ready", "app", info.Slug, "app_id", info.ID, "database", set.Database, "hosts", labels)
	return s, nil
}

// Handler is the server's HTTP handler: /webhook, /healthz, /readyz and /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/webhook", s.ingress)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", s.readyz)
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	return mux
}

// readyz answers 200 when the database takes a write and GitHub answers GET /app. The
// API answer is cached for 30 s so probes do not spend the App's rate limit.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	var problems []string
	if err := s.db.Writable(ctx); err != nil {
		problems = append(problems, "database: "+err.Error())
	}
	s.ready.mu.Lock()
	if s.ready.at.IsZero() || s.o.Now().Sub(s.ready.at) > 30*time.Second {
		_, s.ready.err = s.app.App(ctx)
		s.ready.at = s.o.Now()
	}
	apiErr := s.ready.err
	s.ready.mu.Unlock()
	if apiErr != nil {
		problems = append(problems, "GitHub API: "+apiErr.Error())
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if len(problems) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		for _, p := range problems {
			_, _ = fmt.Fprintln(w, p)
		}
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// Run listens on the settings' address and serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.set.Listen)
	if err != nil {
		s.Close()
		return fmt.Errorf("listening on %s (listen:): %w", s.set.Listen, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then stops taking deliveries, lets the workers
// finish what they hold (work cut short stays received and is done after a restart)
// and closes the database.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.Close()
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // a 25 MB body on a slow link
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, loop := range []func(context.Context){s.pool.run, s.sweepLoop, s.checkLoop} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(work)
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info("server: listening", "addr", ln.Addr().String())
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		err = fmt.Errorf("serving HTTP: %w", err)
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	stop()
	wg.Wait()
	s.log.Info("server: stopped")
	return err
}

// Close closes the database; Serve calls it.
func (s *Server) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// client returns the API client of an installation, one per installation so its
// token and rate-limit memory are reused.
func (s *Server) client(installation int64) (*gh.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[installation]; ok {
		return c, nil
	}
	c, err := s.app.Installation(installation)
	if err != nil {
		return nil, err
	}
	s.clients[installation] = c
	return c, nil
}

// permanent marks a processing error that another attempt cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// retryAt says when a failed delivery may be tried again: after GitHub's rate-limit
// time, or after an exponential backoff.
func (s *Server) retryAt(err error, attempts int) time.Time {
	wait := s.o.RetryBase << min(attempts, 20)
	if wait <= 0 || wait > s.o.RetryMax {
		wait = s.o.RetryMax
	}
	at := s.o.Now().Add(wait)
	var rl *gh.RateLimitError
	if errors.As(err, &rl) && rl.RetryAt.After(at) {
		at = rl.RetryAt
	}
	return at
}
