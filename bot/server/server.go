// Package server is `perfbot serve`: the GitHub App's webhook server. It wires the
// ingress (bot/webhook), the durable inbox (bot/inbox) and its bounded worker pool,
// the gate's decision on each comment (bot/gate), the per-host request queues
// (bot/queue) and their dispatch of the profiling workflow, the sweep that recovers
// deliveries GitHub failed to make, and /healthz, /readyz and /metrics
// (docs/server.md).
//
// New is the one composition root and fails fast: an empty or white-space webhook
// secret, a key GitHub refuses, GitHub out of reach, or a database that cannot be
// written stop it with a message that says which. Server itself only wires and
// serves; the work is done by parts that each ask GitHub and the database only what
// they need, through small interfaces declared where they are used:
//
//   - pool hands stored deliveries to the handler of their event and records the
//     outcome (done, retried later, failed);
//   - commands answers issue_comment deliveries: the replies to help, status,
//     cancel and denied commands, and the acceptance of /profile and /bench
//     (request stored, reaction, status comment, check run, queued);
//   - dispatcher moves each host's queue (claim, dispatch, a lost dispatch found
//     again), follows workflow_run deliveries and reconciles runs with GitHub on
//     the periodic check; hostLoops runs its passes, one goroutine per host;
//   - marks renders a request's status comment, shows a running request's live
//     status (live.go: the run's link, the time, the host's progress file) and
//     finishes its marks when a run did not;
//   - commands also answers check_run deliveries: a check run's Re-run button queues
//     its request again (rerun.go);
//   - sweeper asks GitHub to redeliver the deliveries it failed to make.
//
// An installation's *gh.Client serves every part through one adapter (ghClient); the
// parts' tests give them GitHub in memory instead. The package must not parse
// commands or decide permissions itself (the gate does), and must never log
// payloads, secrets or tokens.
package server

import (
	"bytes"
	"context"
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
	// LiveEvery is how often the status comments of running requests are refreshed
	// (docs/server.md §5); default one minute, the least a progress file is read.
	LiveEvery time.Duration
	// OnSettled, when set, is told each time a worker has finished with a delivery
	// (err is the processing error, nil when it is done). For tests and probes.
	OnSettled func(d inbox.Delivery, err error)
}

// Server is a configured perfbot server: the composition root. It wires the parts,
// each of which asks GitHub and the database only what it needs, through small
// interfaces of its own: the ingress stores deliveries in the inbox, the pool hands
// them to the commands (issue_comment) and the dispatcher (workflow_run), the
// dispatcher moves each host's queue on its own goroutine, and the sweeper recovers
// deliveries GitHub failed to make.
type Server struct {
	set      Settings
	log      *slog.Logger
	now      func() time.Time
	db       *store.DB
	app      *gh.AppTransport
	reg      *prometheus.Registry
	ingress  *webhook.Handler
	pool     *pool
	commands *commands
	runs     *dispatcher
	sweeper  *sweeper
	ready    readyCache
	// liveEvery is Options.LiveEvery.
	liveEvery time.Duration
	// readTimeout and writeTimeout bound a request's reading (a 25 MB body on a slow
	// link) and its answer's writing: 2 min each (tests shorten them).
	readTimeout, writeTimeout time.Duration
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
	if o.LiveEvery <= 0 {
		o.LiveEvery = liveEvery
	}
	key, err := readBounded(set.KeyFile, 64<<10)
	if err != nil {
		return nil, fmt.Errorf("reading the App's private key (github.private_key_file): %w", err)
	}
	gho := o.GitHub
	gho.BaseURL, gho.Logger = set.APIURL, o.Logger
	if gho.Timeout == 0 {
		gho.Timeout = set.APITimeout
	}
	app, err := gh.NewAppTransport(gh.AppAuth{AppID: set.AppID, PrivateKeyPEM: key}, gho)
	if err != nil {
		return nil, err
	}
	info, err := app.App(ctx)
	if err != nil {
		return nil, appCheckError(set, err)
	}
	db, err := store.Open(ctx, set.Database)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Server, error) {
		db.Close()
		return nil, err
	}
	if err := db.Writable(ctx); err != nil {
		return fail(fmt.Errorf("the database %s cannot be written: %w", set.Database, err))
	}
	ib, err := inbox.New(ctx, db, o.Now)
	if err != nil {
		return fail(err)
	}
	s, err := wire(set, o, db, app, info, ib)
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// wire builds the server's parts on an open inbox and registers their metrics.
func wire(set Settings, o Options, db *store.DB, app *gh.AppTransport, info gh.AppInfo, ib *inbox.Inbox) (*Server, error) {
	q := queue.New(db, o.Now)
	var labels []string
	for _, h := range set.Hosts {
		labels = append(labels, h.Label)
	}
	in := &installations{app: app, clients: map[int64]ghClient{}}
	m := newMetrics()
	mk := &marks{queue: q, api: apiOf[markAPI](in), now: o.Now, progress: newProgressReader(set.Hosts, o.Now, o.Logger)}
	runs := &dispatcher{
		log: o.Logger, now: o.Now, hosts: labels, confirmAfter: set.ConfirmAfter,
		queue: q, deliveries: ib, api: apiOf[runAPI](in), marks: mk,
		dispatches: m.dispatches, finished: m.runs, latency: m.dispatchLatency,
		hostMu: map[string]*sync.Mutex{},
	}
	runs.loops = newHostLoops(runs.pass)
	cmds := &commands{
		log: o.Logger, hosts: set.Hosts, botLogin: info.Slug + "[bot]",
		queue: q, api: apiOf[commandAPI](in), marks: mk, queues: runs,
		decisions: m.decisions, finished: m.runs,
		budget: set.CompareBudget, runTime: set.CompareRunTime,
	}
	s := &Server{
		set: set, log: o.Logger, now: o.Now, db: db, app: app, reg: prometheus.NewRegistry(),
		commands: cmds, runs: runs, liveEvery: o.LiveEvery,
		readTimeout: 2 * time.Minute, writeTimeout: 2 * time.Minute,
		sweeper: &sweeper{
			log: o.Logger, now: o.Now, window: set.SweepWindow, hooks: app, inbox: ib,
			sweeps: m.sweeps, redeliveries: m.redeliveries,
		},
		pool: (&pool{
			workers: set.Workers, maxAttempts: set.MaxAttempts, inbox: ib, log: o.Logger, now: o.Now,
			retryBase: o.RetryBase, retryMax: o.RetryMax, onSettled: o.OnSettled,
			processed: m.processed, seconds: m.processSeconds,
			handlers: map[string]func(context.Context, inbox.Delivery) error{
				"issue_comment": cmds.handle,
				"workflow_run":  runs.onWorkflowRun,
				"check_run":     cmds.rerun,
			},
		}).init(),
	}
	for _, c := range append(m.collectors(), q.Collector(labels),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})) {
		if err := s.reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
	}
	s.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "perfbot_inbox_backlog", Help: "Received deliveries not yet processed.",
	}, func() float64 { return float64(ib.Pending()) }))
	s.reg.MustRegister(s.pool.collectors()...)
	var err error
	s.ingress, err = webhook.New(webhook.Options{
		Secret: o.Secret, Store: ib, Handled: s.pool.handled(),
		// Of the check runs' events only the Re-run button is perfbot's to act on.
		Actions:    map[string][]string{"check_run": {"rerequested"}},
		Admit:      func() bool { return ib.Pending() < int64(set.Backlog) },
		Stored:     func(d inbox.Delivery, _ inbox.Outcome) { s.pool.offer(d) },
		BodyBudget: set.BodyBudget,
		Logger:     o.Logger, Registerer: s.reg,
	})
	if err != nil {
		return nil, err
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

// readyz answers 200 when the workers are not all stuck, the database takes a write
// and GitHub answers GET /app. The API answer is cached for 30 s so probes do not
// spend the App's rate limit.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	var problems []string
	if stuck := s.pool.stuck(s.now(), s.set.StuckAfter); stuck != "" {
		problems = append(problems, "workers: "+stuck)
	}
	if err := s.db.Writable(ctx); err != nil {
		problems = append(problems, "database: "+err.Error())
	}
	s.ready.mu.Lock()
	if s.ready.at.IsZero() || s.now().Sub(s.ready.at) > 30*time.Second {
		_, s.ready.err = s.app.App(ctx)
		s.ready.at = s.now()
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
		ReadTimeout:       s.readTimeout,
		WriteTimeout:      s.writeTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	s.runs.loops.start(work)
	var wg sync.WaitGroup
	for _, loop := range []func(context.Context){
		s.pool.run,
		func(ctx context.Context) { every(ctx, s.set.SweepEvery, s.sweeper.run) },
		func(ctx context.Context) { every(ctx, s.set.CheckEvery, s.Check) },
		func(ctx context.Context) { every(ctx, s.liveEvery, s.runs.live) },
	} {
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
	s.runs.loops.wait()
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

// every runs f now and then every period until ctx ends.
func every(ctx context.Context, period time.Duration, f func(context.Context)) {
	for {
		f(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

// Sweep asks GitHub to redeliver the App's recent deliveries that no attempt delivered
// and the inbox does not hold (docs/server.md §7). It returns how many redeliveries it
// asked for.
func (s *Server) Sweep(ctx context.Context) (int, error) { return s.sweeper.sweep(ctx) }

// Check reconciles every host's queue with GitHub (dispatches to retry or confirm,
// runs whose end was missed), drops requests that could not be queued, and prunes old
// deliveries once a day.
func (s *Server) Check(ctx context.Context) {
	s.runs.check(ctx)
	s.pool.prune(ctx, s.set.Retention)
}
