package demo

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/fakehost"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/guard"
)

// Options configure one demo.
type Options struct {
	// Out is where the outputs go (the report page, results, the pull request's diff,
	// the comments as Markdown, the step logs); "" makes a new temporary folder.
	Out string
	// Keep keeps the working folders (the bare remote, the server's database, the
	// runner's workspace) under Out/work instead of removing them.
	Keep bool
	// Stdout gets one line per step.
	Stdout io.Writer
	// Perfbot is the perfbot binary the fake tools call (the fake bench runs `perfbot
	// synth`); "" means this executable.
	Perfbot string
	// Command is the maintainer's command on the pull request; "" means
	// "/profile rocm models=llama,qwen3,granite,nemotron". A compare
	// ("/profile rocm compare ...") runs the same flow with A the merge base.
	Command string
	// Change, when set, is a fake-change.txt committed in the pull request's head: a
	// known change the simulated host plants in that commit's profiles (docs/synth.md).
	Change string
}

// Result is what the demo produced.
type Result struct {
	Out     string
	Ranking []string          // the ranked port order, best first ("#2065 ...")
	Files   map[string]string // what -> path, every output
	Elapsed time.Duration
}

// The demo's cast and places.
const (
	owner      = "lablup"
	repoName   = "mlxcel"
	epic       = 1814
	pr         = 1900
	maintainer = "maintainer"
	reader     = "reader"
	appID      = 1
	appSlug    = "perfbot"
	gpuLabel   = "gfx1151"
	workflow   = "perfbot-profile.yml"
	command    = "/profile rocm models=llama,qwen3,granite,nemotron"
	// botBranch is the request's own bot branch: the command is on pull request #1900.
	botBranch = "perfbot/rocm-profile-pr-1900"
)

// printer prints one line per step with the time since the start.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (p *printer) step(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%5.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, a...))
}

// Run runs the whole `/profile rocm` flow on this machine and returns where its
// outputs are.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	p := &printer{w: o.Stdout, start: time.Now()}
	var err error
	if o.Out == "" {
		if o.Out, err = os.MkdirTemp("", "perfbot-demo-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("making the output folder: %w", err)
	}
	if o.Out, err = filepath.Abs(o.Out); err != nil {
		return nil, err
	}
	if entries, _ := os.ReadDir(o.Out); len(entries) > 0 {
		return nil, fmt.Errorf("the output folder %s is not empty: give a new or empty folder with --out", o.Out)
	}
	if o.Perfbot == "" {
		if o.Perfbot, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding perfbot's own binary: %w", err)
		}
	}
	work := filepath.Join(o.Out, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	if !o.Keep {
		defer os.RemoveAll(work)
	}
	d := &demo{o: o, p: p, work: work, res: &Result{Out: o.Out, Files: map[string]string{}}}
	err = d.run(ctx)
	d.res.Elapsed = time.Since(p.start)
	return d.res, err
}

// demo is one run of the flow; each method is one stage and reads only what the
// stages before it set.
type demo struct {
	o    Options
	p    *printer
	work string
	res  *Result

	home   string
	host   fakehost.Host
	kfd    string
	tg     target
	fake   *fakegithub.Server
	key    []byte // the App's private key, PEM
	send   *sender
	runs   chan fakegithub.Dispatch
	tenant *tenant
	// resultsName is the results folder's name (<gfx>_<commit8>), which the artifact
	// holds.
	resultsName string
}

func (d *demo) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.p.step("perfbot demo: the /profile rocm flow on a simulated gfx1151 host and a local GitHub; outputs in %s", d.o.Out)
	// What the simulated host and the sample repository run, besides perfbot.
	for tool, why := range map[string]string{
		"git": "the sample repository and the bot branch", "python3": "the sample repository's kernel-port checker",
		"sh": "the simulated host's tools", "sleep": "the planted GPU tenant",
	} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("the demo needs %s on PATH (for %s): install it and run the demo again", tool, why)
		}
	}
	if err := d.layHost(); err != nil {
		return err
	}
	err := d.startGitHub(ctx)
	if d.fake != nil {
		defer d.fake.Close()
	}
	if err != nil {
		return err
	}
	stop, err := d.startServer(ctx)
	if err != nil {
		return err
	}
	defer stop()
	defer d.tenant.leave()

	cmd := command
	if d.o.Command != "" {
		cmd = d.o.Command
	}
	trigger, err := d.comment(ctx, maintainer, cmd)
	if err != nil {
		return err
	}
	if err := d.awaitAcceptance(ctx, trigger); err != nil {
		return err
	}
	if err := d.refusal(ctx); err != nil {
		return err
	}
	var dispatch fakegithub.Dispatch
	select {
	case dispatch = <-d.runs:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Second):
		return errors.New("the server accepted the command but dispatched no workflow run within 30 s")
	}
	outputs, err := d.runWorkflow(ctx, dispatch)
	if err != nil {
		return err
	}
	if err := d.awaitFinished(ctx, trigger); err != nil {
		return err
	}
	return d.report(ctx, outputs)
}

// layHost extracts the simulated gfx1151 host: its root with the real /proc (the guard
// watches real processes), an empty KFD process list, the fake tools and this perfbot
// first on PATH, and a private guard lock.
func (d *demo) layHost() error {
	var err error
	if d.host, err = fakehost.Extract(filepath.Join(d.work, "host")); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(d.host.Root, "proc")); err != nil {
		return err
	}
	if err := os.Symlink("/proc", filepath.Join(d.host.Root, "proc")); err != nil {
		return err
	}
	d.kfd = filepath.Join(d.host.Root, "sys", "class", "kfd", "kfd", "proc")
	if err := os.MkdirAll(d.kfd, 0o755); err != nil {
		return err
	}
	d.tenant = &tenant{kfd: d.kfd}
	self := filepath.Join(d.work, "perfbot-bin")
	if err := os.MkdirAll(self, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(d.o.Perfbot, filepath.Join(self, "perfbot")); err != nil {
		return err
	}
	d.home = filepath.Join(d.work, "home")
	if err := os.MkdirAll(d.home, 0o755); err != nil {
		return err
	}
	// The Action's host jobs run their tools with the process environment, as on a
	// runner: the demo is that runner.
	for k, v := range map[string]string{
		"PATH":              d.host.Bin + string(os.PathListSeparator) + self + string(os.PathListSeparator) + os.Getenv("PATH"),
		"FAKEHOST_ROCMINFO": d.host.Rocminfo,
		guard.EnvLock:       filepath.Join(d.work, "guard.lock"),
		guard.EnvKFDDir:     "/sys/class/kfd/kfd/proc",
		guard.EnvCompilerRE: `^perfbot-demo-watches-no-compiler$`,
		// git ignores the user's and the system's configuration; HOME stays, so the
		// host facts see the machine's own toolchains, as on a real runner.
		"GIT_CONFIG_GLOBAL":   os.DevNull,
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_TERMINAL_PROMPT": "0",
	} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	d.p.step("simulated gfx1151 host: fake root, rocminfo, rocprofv3, mlxcel-bench-decode and cargo in %s", d.host.Bin)
	return nil
}

// startGitHub lays the sample repository and serves the local GitHub.
func (d *demo) startGitHub(ctx context.Context) error {
	var err error
	if d.tg, err = layTarget(ctx, d.home, filepath.Join(d.work, "remote"), d.o.Change); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	d.key = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if d.fake, err = fakegithub.Start(fakegithub.App(appID, appSlug, &key.PublicKey)); err != nil {
		return err
	}
	d.fake.AddUser(fakegithub.User{Login: maintainer})
	d.fake.AddUser(fakegithub.User{Login: reader})
	d.fake.AddRepo(&fakegithub.Repo{Owner: owner, Name: repoName, DefaultBranch: "main", GitDir: d.tg.bare,
		Collaborators: map[string]string{maintainer: fakegithub.PermWrite, reader: fakegithub.PermRead}})
	full := owner + "/" + repoName
	if _, err := d.fake.AddIssue(full, fakegithub.Issue{Number: epic, Title: "ROCm: port the fused decode kernels", User: maintainer,
		Body: "The kernel-port epic: one issue per fused-kernel family."}); err != nil {
		return err
	}
	if _, err := d.fake.AddIssue(full, fakegithub.Issue{Number: pr, Title: "rocm: fused SSM state update", User: maintainer,
		PR: &fakegithub.Pull{Head: d.tg.prBranch, Base: "main"}}); err != nil {
		return err
	}
	d.runs = make(chan fakegithub.Dispatch, 4)
	d.fake.OnDispatch(func(x fakegithub.Dispatch) { d.runs <- x })
	d.p.step("local GitHub at %s: %s (bare remote %s), epic #%d, open pull request #%d (%s at %s)",
		d.fake.URL(), full, d.tg.bare, epic, pr, d.tg.prBranch, strs.ShortSHA(d.tg.prHead))
	return nil
}

// startServer starts `perfbot serve` in this process with a generated App key and
// webhook secret, and returns how to stop it.
func (d *demo) startServer(ctx context.Context) (func(), error) {
	secret := make([]byte, 32)
	rand.Read(secret) //nolint:errcheck // crypto/rand does not fail on Linux
	secretHex := []byte(hex.EncodeToString(secret))
	dir := filepath.Join(d.work, "server")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, d.key, 0o600); err != nil {
		return nil, err
	}
	set := server.DefaultSettings()
	set.Database = filepath.Join(dir, "perfbot.db")
	set.APIURL = d.fake.URL()
	set.AppID = appID
	set.KeyFile = keyFile
	set.Hosts = []server.Host{{Label: gpuLabel, Backend: "rocm", Workflow: workflow}}
	set.Workers = 2
	set.ConfirmAfter = 2 * time.Second
	logf, err := os.Create(filepath.Join(d.o.Out, "server.log"))
	if err != nil {
		return nil, err
	}
	srv, err := server.New(ctx, set, server.Options{Secret: secretHex, Logger: slog.New(slog.NewJSONHandler(logf, nil)),
		RetryBase: 200 * time.Millisecond, RetryMax: 2 * time.Second})
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting perfbot serve: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		logf.Close()
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	d.send = &sender{url: "http://" + ln.Addr().String() + "/webhook", secret: secretHex, client: &http.Client{Timeout: 10 * time.Second}}
	d.res.Files["the server's log (JSON)"] = logf.Name()
	d.p.step("perfbot serve on %s: App %d with a generated key, webhook secret generated, queue for runner label %s -> %s",
		ln.Addr(), appID, gpuLabel, workflow)
	return func() {
		stop()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		logf.Close()
	}, nil
}

// comment writes a comment on the pull request as user, and delivers it to the server
// as GitHub would.
func (d *demo) comment(ctx context.Context, user, body string) (fakegithub.Comment, error) {
	c, err := d.fake.AddComment(owner+"/"+repoName, pr, user, body)
	if err != nil {
		return c, err
	}
	payload, err := commentEvent(owner, repoName, pr, true, c, d.fake.UserID(user))
	if err != nil {
		return c, err
	}
	del, err := d.send.post(ctx, "issue_comment", payload)
	if err != nil {
		return c, err
	}
	d.p.step("%s comments on #%d: %q -> delivery %s answered %d", user, pr, body, del.GUID[:8], del.Status)
	return c, nil
}

// awaitAcceptance waits for the server's answers to an accepted command: the eyes
// reaction, the status comment and the dispatch.
func (d *demo) awaitAcceptance(ctx context.Context, trigger fakegithub.Comment) error {
	err := waitFor(ctx, 20*time.Second, "the eyes reaction, the status comment and the check run", func() bool {
		c, _ := d.fake.Comment(trigger.ID)
		return slices.Contains(c.Reactions, "eyes") && len(d.botComments(trigger.ID)) > 0 && len(d.fake.CheckRuns()) > 0
	})
	if err != nil {
		return err
	}
	status := d.botComments(trigger.ID)
	var first string
	if len(status) > 0 {
		first = firstLine(status[0].Body)
	}
	checks := d.fake.CheckRuns()
	check := "no check run"
	if len(checks) > 0 {
		check = fmt.Sprintf("check run %q on %s", checks[0].Name, strs.ShortSHA(checks[0].HeadSHA))
	}
	d.p.step("accepted: eyes on the command, status comment %q, %s", first, check)
	return nil
}

// refusal has a read-only user ask for a run, and shows the reply.
func (d *demo) refusal(ctx context.Context) error {
	c, err := d.comment(ctx, reader, "/profile rocm")
	if err != nil {
		return err
	}
	var reply string
	err = waitFor(ctx, 20*time.Second, "the reply to the read-only user", func() bool {
		for _, b := range d.botComments(c.ID) {
			if strings.Contains(b.Body, "@"+reader) || strings.Contains(b.Body, reader) {
				reply = b.Body
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	d.p.step("refused %s with a reply: %q; nothing dispatched for it", reader, firstLine(reply))
	return nil
}

// botComments are the bot's comments on the pull request written after comment id.
func (d *demo) botComments(after int64) []fakegithub.Comment {
	var out []fakegithub.Comment
	for _, c := range d.fake.Comments(pr) {
		if c.ID > after && c.User == appSlug+"[bot]" {
			out = append(out, c)
		}
	}
	return out
}

// awaitFinished waits for the end of the run as the users see it: the rocket on the
// command and the status comment finished.
func (d *demo) awaitFinished(ctx context.Context, trigger fakegithub.Comment) error {
	err := waitFor(ctx, 30*time.Second, "the rocket on the command", func() bool {
		c, _ := d.fake.Comment(trigger.ID)
		return slices.Contains(c.Reactions, "rocket") || slices.Contains(c.Reactions, "confused")
	})
	if err != nil {
		return err
	}
	c, _ := d.fake.Comment(trigger.ID)
	d.p.step("finished: reactions %s on the command", strings.Join(c.Reactions, ", "))
	return nil
}

// report writes the GitHub side as files and prints the ranked order and where every
// output is.
func (d *demo) report(ctx context.Context, outputs map[string]string) error {
	files, err := writeGitHub(ctx, d.home, d.o.Out, d.fake, owner+"/"+repoName, d.tg, botBranch)
	if err != nil {
		return err
	}
	for k, v := range files {
		d.res.Files[k] = v
	}
	if outputs["ranking"] == "" {
		// A compare ranks nothing: its answer is the compare comment.
		return d.keepResults(ctx)
	}
	var rk struct {
		Units []struct {
			Unit string `json:"unit"`
			Port string `json:"port"`
			Best *struct {
				Run string  `json:"run"`
				MS  float64 `json:"recoverable_ms_per_token"`
			} `json:"best"`
		} `json:"units"`
	}
	if err := json.Unmarshal([]byte(outputs["ranking"]), &rk); err != nil {
		return fmt.Errorf("reading the ranking the publish step wrote: %w", err)
	}
	for _, u := range rk.Units {
		line := fmt.Sprintf("#%s %s", u.Unit, u.Port)
		if u.Best != nil && u.Best.MS > 0 {
			line += fmt.Sprintf(": %.2f ms/token recoverable in %s", u.Best.MS, u.Best.Run)
		} else {
			line += ": no run reaches it (ranked by the share its fallback kernels take)"
		}
		d.res.Ranking = append(d.res.Ranking, line)
	}
	if err := d.keepResults(ctx); err != nil {
		return err
	}
	fmt.Fprintf(d.o.Stdout, "\nranked port order (the epic comment on #%d):\n", epic)
	for i, r := range d.res.Ranking {
		fmt.Fprintf(d.o.Stdout, "  %d. %s\n", i+1, r)
	}
	fmt.Fprintf(d.o.Stdout, "\noutputs:\n")
	keys := make([]string, 0, len(d.res.Files))
	for k := range d.res.Files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(d.o.Stdout, "  %-34s %s\n", k, d.res.Files[k])
	}
	return nil
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "<!--") {
			if len(l) > 100 {
				l = l[:100] + "..."
			}
			return l
		}
	}
	return ""
}

// keepResults copies what the run left in the runner's folders, which go away with the
// demo, into the output folder: the results folder and the report page as committed on
// the bot branch.
func (d *demo) keepResults(ctx context.Context) error {
	src := d.res.Files["results folder"]
	if src != "" {
		dst := filepath.Join(d.o.Out, "results", filepath.Base(src))
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			return fmt.Errorf("copying the results folder: %w", err)
		}
		d.res.Files["results folder"] = dst
	}
	page := d.res.Files["report page (on the bot branch)"]
	delete(d.res.Files, "report page (on the bot branch)")
	if page != "" {
		body, err := runGit(ctx, d.home, d.tg.bare, "show", botBranch+":"+page)
		if err != nil {
			return fmt.Errorf("reading the report page from the bot branch: %w", err)
		}
		p := filepath.Join(d.o.Out, "report.md")
		if err := os.WriteFile(p, []byte(body+"\n"), 0o644); err != nil {
			return err
		}
		d.res.Files["report page ("+page+")"] = p
	}
	return nil
}
