package gitpub

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// gitRunner runs the git binary in one repository with an environment that does not
// depend on the machine's user config, runs no hooks, never prompts and carries the
// token only in environment variables.
type gitRunner struct {
	dir   string
	token string
	// authURLs are the remote URLs the token's header is scoped to.
	authURLs []string
	// trace, when set, sees every argv before it runs (a test seam).
	trace func(argv []string)
}

// droppedEnv are inherited variables that would point git at another repository, index
// or identity, inject config, or print secrets; each is replaced by what we pass.
var droppedEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_QUARANTINE_PATH", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_ASKPASS", "SSH_ASKPASS", "GIT_CURL_VERBOSE", "GIT_REDACT_COOKIES",
	"LANGUAGE", "LC_ALL", "LC_MESSAGES",
}

var droppedPrefixes = []string{"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_AUTHOR_", "GIT_COMMITTER_", "GIT_TRACE"}

func (g *gitRunner) env(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if dropEnv(k) {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_OPTIONAL_LOCKS=0",
		// Output is parsed (push porcelain, error texts): keep it untranslated.
		"LC_ALL=C",
		// Objects are read as they are: a replace ref in the clone must not change a
		// base tree or what is an ancestor of what.
		"GIT_NO_REPLACE_OBJECTS=1",
	)
	if g.token != "" && len(g.authURLs) > 0 {
		env = append(env, authEnv(g.token, g.authURLs)...)
	}
	return append(env, extra...)
}

func dropEnv(k string) bool {
	for _, d := range droppedEnv {
		if k == d {
			return true
		}
	}
	for _, p := range droppedPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// authEnv sends the token as an HTTP Authorization header through GIT_CONFIG_COUNT, the
// way actions/checkout does, so it never reaches argv, the URL or the repo's config. The
// key is scoped to the exact remote URL, the most specific match git allows, and first
// reset with an empty value: a header persisted in the clone's config (actions/checkout
// leaves the workflow's GITHUB_TOKEN there) must not be sent alongside ours.
func authEnv(token string, urls []string) []string {
	header := "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	var env []string
	n := 0
	for _, u := range urls {
		key := "http." + u + ".extraheader"
		for _, v := range []string{"", header} {
			env = append(env,
				"GIT_CONFIG_KEY_"+strconv.Itoa(n)+"="+key,
				"GIT_CONFIG_VALUE_"+strconv.Itoa(n)+"="+v)
			n++
		}
	}
	return append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(n))
}

// isHTTP reports whether a remote URL is one the token header applies to.
func isHTTP(u string) bool {
	return strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")
}

// checkURL refuses URLs carrying a password: the token belongs in Token, where it stays
// out of argv, the clone's config and error messages.
func checkURL(raw string) error {
	if !isHTTP(raw) {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("remote URL is not valid (%v): give an https URL like https://github.com/owner/repo.git", redactURLError(err))
	}
	if _, has := u.User.Password(); has {
		return errors.New("remote URL carries a password or token: pass the token as Token and use the plain URL")
	}
	return nil
}

// redactURLError keeps url.Parse's reason but not the URL it quotes, which may hold a
// secret.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

type gitOpts struct {
	stdin io.Reader
	env   []string
	// maxOut bounds the bytes of stdout kept; past it git is stopped and the command
	// fails with an error wrapping errTooMuchOutput. 0 keeps everything (the callers
	// that leave it 0 read outputs bounded by what they ask for).
	maxOut int
}

// cappedBuffer keeps the first max bytes written and silently drops the rest (a field,
// not embedded, for the same reason as limitedBuffer).
type cappedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// errTooMuchOutput is a git command whose output went over gitOpts.maxOut.
var errTooMuchOutput = errors.New("git printed more than expected")

// limitedBuffer keeps at most max bytes; a write past it fails, which closes git's
// stdout so git stops instead of streaming on. The buffer is a field, not embedded, so
// io.Copy cannot reach bytes.Buffer.ReadFrom around the bound.
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		b.over = true
		return 0, errTooMuchOutput
	}
	return b.buf.Write(p)
}

// run executes git with args and returns its trimmed stdout. Errors name the git
// subcommand and carry git's stderr with any secret redacted.
func (g *gitRunner) run(ctx context.Context, o gitOpts, args ...string) (string, error) {
	out, errOut, err := g.exec(ctx, o, args...)
	if err != nil {
		return out, g.wrap(args, err, errOut)
	}
	return strings.TrimRight(out, "\n"), nil
}

// exec runs git and returns stdout and stderr raw, for callers that parse both.
func (g *gitRunner) exec(ctx context.Context, o gitOpts, args ...string) (stdout, stderr string, err error) {
	argv := append([]string{"git", "-C", g.dir, "-c", "core.hooksPath=/dev/null"}, args...)
	if g.trace != nil {
		g.trace(append([]string(nil), argv...))
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = g.env(o.env)
	cmd.Stdin = o.stdin
	var out bytes.Buffer
	// git's stderr is only quoted in errors, cut to 2000 bytes there: keep the start,
	// drop the rest without failing git.
	errb := cappedBuffer{max: 64 << 10}
	cmd.Stdout = &out
	cmd.Stderr = &errb
	var lim *limitedBuffer
	if o.maxOut > 0 {
		lim = &limitedBuffer{max: o.maxOut}
		cmd.Stdout = lim
	}
	// A killed git can leave a child holding the pipes; do not wait on it forever.
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	if lim != nil {
		if lim.over {
			err = fmt.Errorf("%w (over %d bytes)", errTooMuchOutput, o.maxOut)
		}
		return lim.buf.String(), errb.buf.String(), err
	}
	return out.String(), errb.buf.String(), err
}

func (g *gitRunner) wrap(args []string, err error, stderr string) error {
	msg := strings.TrimSpace(stderr)
	if len(msg) > 2000 {
		msg = msg[:2000] + " ..."
	}
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	return &gitError{Sub: sub, Stderr: msg, Hint: hint(msg), err: err, redact: g.secrets()}
}

// hint turns git's most common remote failures into what to do about them.
func hint(stderr string) string {
	s := strings.ToLower(stderr)
	switch {
	case strings.Contains(s, "could not read username"), strings.Contains(s, "authentication failed"),
		strings.Contains(s, "returned error: 401"), strings.Contains(s, "returned error: 403"),
		strings.Contains(s, "permission to") && strings.Contains(s, "denied"):
		return "the remote refused the credentials: check that the token is set, valid and allowed to push (contents: write)"
	case strings.Contains(s, "could not resolve host"), strings.Contains(s, "connection refused"),
		strings.Contains(s, "timed out"):
		return "the remote could not be reached: check the URL and the network, then rerun"
	}
	return ""
}

// secrets are the strings that must never leave this package: the token and the forms
// it takes on the wire.
func (g *gitRunner) secrets() []string {
	if g.token == "" {
		return nil
	}
	cred := "x-access-token:" + g.token
	return []string{g.token, cred, base64.StdEncoding.EncodeToString([]byte(cred))}
}

// gitError is a failed git command with its stderr.
type gitError struct {
	Sub    string
	Stderr string
	Hint   string
	err    error
	redact []string
}

func (e *gitError) Error() string {
	s := "git " + e.Sub + ": " + e.err.Error()
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return redact(s, e.redact)
}

func (e *gitError) Unwrap() error { return e.err }

func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return s
}
