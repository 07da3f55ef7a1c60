package gh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v62/github"
	"golang.org/x/oauth2"
)

// DefaultBaseURL is github.com's REST API.
const DefaultBaseURL = "https://api.github.com/"

// Options configures a Client or an AppTransport. The zero value works for github.com.
type Options struct {
	// BaseURL is the REST API root: GITHUB_API_URL in Actions, or
	// https://HOST/api/v3/ on GitHub Enterprise Server. Default DefaultBaseURL.
	BaseURL string
	// UserAgent identifies perfbot to GitHub. Default "perfbot".
	UserAgent string
	// MaxRetries bounds retries per request (server errors and rate limits). Zero
	// means the default (3); a negative value disables retries.
	MaxRetries int
	// MaxWait bounds one rate-limit wait; a longer one fails with RateLimitError.
	// Default two minutes (GitHub's secondary limit usually asks for 60 s).
	MaxWait time.Duration
	// Login is the account whose comments count as the bot's own, e.g.
	// "github-actions[bot]" for the Actions GITHUB_TOKEN. When empty it is looked up:
	// GET /user for a token, the App's slug + "[bot]" for an installation.
	Login string
	// Sleep waits between attempts; tests inject one that records and returns at once.
	// Default: a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock used against GitHub's reset times. Default time.Now.
	Now func() time.Time
	// Logger receives retry and wait notices (never headers or tokens). Default: none.
	Logger *slog.Logger
	// Timeout bounds each attempt of a request: connecting, sending, waiting for the
	// answer and reading its body. An attempt that runs out fails with a *TimeoutError
	// and is not repeated within the call. Zero means DefaultTimeout; a negative value
	// means no bound (for tests that hold a call on purpose).
	Timeout time.Duration
}

// DefaultTimeout bounds one attempt of a request when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

func (o Options) normalize() (Options, *url.URL, error) {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return o, nil, fmt.Errorf("GitHub API base URL %q: want an http(s) URL such as %s or https://HOST/api/v3/", o.BaseURL, DefaultBaseURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		// go-github resolves paths against the base: without the slash the last
		// segment (api/v3) would be dropped.
		u.Path += "/"
	}
	if o.UserAgent == "" {
		o.UserAgent = "perfbot"
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = defaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.MaxWait <= 0 {
		o.MaxWait = defaultMaxWait
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Login != "" && !validUser(o.Login) {
		return o, nil, fmt.Errorf("bot login %q is not a GitHub login (for example perfbot[bot] or github-actions[bot])", o.Login)
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, u, nil
}

// Client performs perfbot's GitHub calls with one identity. It is safe for concurrent use.
type Client struct {
	hc   *http.Client
	base *url.URL
	o    Options
	lim  *limiter
	// whoami finds the identity's login when Options.Login is empty.
	whoami func(ctx context.Context) (string, error)
	// gitToken gives git the same identity (nil: none).
	gitToken func(ctx context.Context) (string, error)

	mu    sync.Mutex
	login string
}

// NewTokenClient returns a Client authenticated with a static token (a personal access
// token, the Actions GITHUB_TOKEN, or an installation token minted elsewhere).
func NewTokenClient(token string, o Options) (*Client, error) {
	token = strings.TrimSpace(token) // token files usually end in a newline
	if token == "" {
		return nil, errors.New("no GitHub token: pass one (in Actions, ${{ github.token }} or an App installation token)")
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return nil, errors.New("the GitHub token contains whitespace: pass the token alone, without a prefix such as \"token \"")
	}
	o, base, err := o.normalize()
	if err != nil {
		return nil, err
	}
	auth := &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}),
		Base:   newTransport(o),
	}
	c := newClient(&http.Client{Transport: auth}, base, o)
	c.whoami = c.userLogin
	c.gitToken = func(context.Context) (string, error) { return token, nil }
	return c, nil
}

func newClient(hc *http.Client, base *url.URL, o Options) *Client {
	return &Client{hc: hc, base: base, o: o, lim: &limiter{}, login: o.Login}
}

// api returns a fresh go-github client per call on purpose: go-github remembers rate
// limits itself and would refuse calls locally, bypassing the transport's bounded,
// injectable waits. Construction is a few allocations; the HTTP client is shared.
func (c *Client) api() *github.Client {
	g := github.NewClient(c.hc)
	u := *c.base
	g.BaseURL = &u
	g.UserAgent = c.o.UserAgent
	return g
}

// ctx attaches this Client's rate-limit memory to a request context.
func (c *Client) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, limiterKey, c.lim)
}

// Login returns the login whose comments count as the bot's own, looking it up once.
func (c *Client) Login(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.login != "" {
		return c.login, nil
	}
	if c.whoami == nil {
		return "", errors.New("the bot's own login is unknown: set Options.Login")
	}
	login, err := c.whoami(ctx)
	if err != nil {
		return "", err
	}
	c.login = login
	return login, nil
}

func (c *Client) userLogin(ctx context.Context) (string, error) {
	u, _, err := c.api().Users.Get(c.ctx(ctx), "")
	if err != nil {
		if statusIs(wrap(err, "", ""), http.StatusForbidden) {
			return "", errors.New("finding the bot's own login: GitHub refused GET /user, as it does for Actions and App installation tokens; set Options.Login (github-actions[bot] for the Actions GITHUB_TOKEN)")
		}
		return "", wrap(err, "finding the bot's own login (GET /user)", "")
	}
	if u.GetLogin() == "" {
		return "", errors.New("finding the bot's own login: GET /user returned no login; set Options.Login")
	}
	return u.GetLogin(), nil
}

// AppAuth identifies a GitHub App.
type AppAuth struct {
	AppID         int64
	PrivateKeyPEM []byte
}

// AppTransport authenticates as a GitHub App; it parses the private key once and
// derives one Client per installation.
type AppTransport struct {
	atr  *ghinstallation.AppsTransport
	base *url.URL
	o    Options
	app  *Client // JWT-authenticated, for App-level calls such as GET /app
	// mint serialises installation-token refreshes: ghinstallation writes fields of the
	// shared AppsTransport on every refresh.
	mint sync.Mutex

	mu   sync.Mutex
	slug string
}

// NewAppTransport parses the App's private key and prepares App authentication.
func NewAppTransport(a AppAuth, o Options) (*AppTransport, error) {
	if a.AppID <= 0 {
		return nil, fmt.Errorf("GitHub App id %d: want the positive id from the App's settings page", a.AppID)
	}
	if len(a.PrivateKeyPEM) == 0 {
		return nil, errors.New("no GitHub App private key: pass the PEM file downloaded from the App's settings page")
	}
	o, base, err := o.normalize()
	if err != nil {
		return nil, err
	}
	atr, err := ghinstallation.NewAppsTransport(newTransport(o), a.AppID, a.PrivateKeyPEM)
	if err != nil {
		// The library's message is generic; it never contains the key.
		return nil, fmt.Errorf("parsing the GitHub App private key (want the PEM file from the App's settings page): %w", err)
	}
	atr.BaseURL = strings.TrimSuffix(base.String(), "/")
	t := &AppTransport{atr: atr, base: base, o: o}
	t.app = newClient(&http.Client{Transport: atr}, base, o)
	return t, nil
}

// Installation returns a Client acting as one installation of the App. Its token is
// minted on first use and renewed before it expires.
func (t *AppTransport) Installation(installationID int64) (*Client, error) {
	if installationID <= 0 {
		return nil, fmt.Errorf("installation id %d: want the positive id from the webhook payload's installation field (a payload without one is not an App delivery)", installationID)
	}
	itr := ghinstallation.NewFromAppsTransport(t.atr, installationID)
	rt := &installationRT{itr: itr, app: t}
	c := newClient(&http.Client{Transport: rt}, t.base, t.o)
	c.whoami = t.botLogin
	c.gitToken = rt.token
	return c, nil
}

// GitToken returns a token git can push with as this client's identity: the
// installation token for an App installation (minted or reused), the static token
// otherwise.
func (c *Client) GitToken(ctx context.Context) (string, error) {
	if c.gitToken == nil {
		return "", errors.New("this client has no token for git")
	}
	return c.gitToken(ctx)
}

// botLogin is the login the App's comments carry: its slug plus "[bot]".
func (t *AppTransport) botLogin(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.slug == "" {
		app, _, err := t.app.api().Apps.Get(t.app.ctx(ctx), "")
		if err != nil {
			return "", wrap(err, "finding the App's own login (GET /app)", "")
		}
		if app.GetSlug() == "" {
			return "", errors.New("finding the App's own login: GET /app returned no slug; set Options.Login")
		}
		t.slug = app.GetSlug()
	}
	return t.slug + "[bot]", nil
}

// installationRT mints the installation token under the App-wide lock, then lets
// ghinstallation authenticate the request with it.
type installationRT struct {
	itr *ghinstallation.Transport
	app *AppTransport
}

func (r *installationRT) token(ctx context.Context) (string, error) {
	r.app.mint.Lock()
	tok, err := r.itr.Token(ctx)
	r.app.mint.Unlock()
	if err != nil {
		return "", mintError(r.itr.InstallationID(), err)
	}
	return tok, nil
}

func (r *installationRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.app.mint.Lock()
	_, err := r.itr.Token(req.Context())
	r.app.mint.Unlock()
	if err != nil {
		closeBody(req)
		return nil, mintError(r.itr.InstallationID(), err)
	}
	return r.itr.RoundTrip(req)
}

func mintError(id int64, err error) error {
	op := fmt.Sprintf("minting an installation token for installation %d", id)
	var he *ghinstallation.HTTPError
	if errors.As(err, &he) && he.Response != nil && he.RootCause == nil {
		resp := he.Response
		msg := ""
		if resp.Body != nil {
			msg = githubMessage(resp)
		}
		if resp.StatusCode == http.StatusNotFound {
			op += " (is the App installed on this account?)"
		}
		return newAPIError(op, "", resp, msg, nil)
	}
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return fmt.Errorf("%s: %w", op, rl)
	}
	if he != nil && he.RootCause != nil {
		err = he.RootCause
	}
	return fmt.Errorf("%s: %w", op, err)
}
