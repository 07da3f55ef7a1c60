package gitpub

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/gittest"
)

const (
	goodToken  = "ghs_GoodInstallationToken0123456789abcdef"
	staleToken = "ghs_StaleWorkflowToken0123456789abcdefgh"
)

func TestPublishOverHTTPSendsTokenOnlyAsHeader(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	srv := gittest.NewHTTPServer(t, r.dir, goodToken)
	log := &argvLog{}
	p, err := Clone(context.Background(), srv.URL, filepath.Join(t.TempDir(), "pub.git"),
		CloneOptions{Token: goodToken, Branches: []string{botBranch}, trace: log.record})
	if err != nil {
		t.Fatalf("Clone: %v", err)
	}
	if p.DefaultBranch != "main" {
		t.Fatalf("DefaultBranch = %q, want main from the remote's HEAD", p.DefaultBranch)
	}
	// A token persisted in the clone (actions/checkout leaves the workflow's token in
	// http.<url>.extraheader) must be replaced by ours, not sent alongside it.
	stale := "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+staleToken))
	host := srv.URL[:strings.Index(srv.URL, "/git/")+1]
	for _, key := range []string{"http." + host + ".extraheader", "http." + srv.URL + ".extraheader", "http.extraheader"} {
		gittest.Git(t, p.Dir, "config", "--add", key, stale)
	}

	res, err := p.Publish(context.Background(), resultsChange(t, r.base))
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if res.Action != ActionCreated || r.ref(t, "refs/heads/"+botBranch) != res.Commit {
		t.Fatalf("result = %+v, remote branch %s", res, r.ref(t, "refs/heads/"+botBranch))
	}
	good, bad := srv.Requests(goodToken)
	if good == 0 || bad != 0 {
		t.Fatalf("requests with the token = %d, without or with another = %d; want all with exactly ours", good, bad)
	}
	assertNoSecret(t, log.joined(), goodToken, "argv")
	cfg, err := os.ReadFile(filepath.Join(p.Dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, string(cfg), goodToken, "the clone's config")
}

func TestTokenNeverInErrors(t *testing.T) {
	t.Parallel()
	r := newRemote(t)
	srv := gittest.NewHTTPServer(t, r.dir, goodToken)
	wrong := "ghs_WrongTokenThatMustNotLeak0123456789"

	t.Run("clone with a wrong token", func(t *testing.T) {
		t.Parallel()
		log := &argvLog{}
		_, err := Clone(context.Background(), srv.URL, filepath.Join(t.TempDir(), "pub.git"),
			CloneOptions{Token: wrong, Branches: []string{botBranch}, trace: log.record})
		if err == nil {
			t.Fatal("Clone with a wrong token succeeded")
		}
		assertNoSecret(t, err.Error(), wrong, "the error")
		assertNoSecret(t, log.joined(), wrong, "argv")
	})
	t.Run("publish with a wrong token", func(t *testing.T) {
		t.Parallel()
		p, err := Clone(context.Background(), srv.URL, filepath.Join(t.TempDir(), "pub.git"),
			CloneOptions{Token: goodToken, Branches: []string{botBranch}})
		if err != nil {
			t.Fatal(err)
		}
		log := &argvLog{}
		p.Token, p.trace = wrong, log.record
		_, err = p.Publish(context.Background(), resultsChange(t, r.base))
		if err == nil {
			t.Fatal("Publish with a wrong token succeeded")
		}
		if errors.Is(err, ErrRefused) {
			t.Fatalf("a failed login is not a refusal: %v", err)
		}
		if !strings.Contains(err.Error(), "the remote refused the credentials") {
			t.Fatalf("error %q does not say the credentials were refused", err)
		}
		assertNoSecret(t, err.Error(), wrong, "the error")
		assertNoSecret(t, log.joined(), wrong, "argv")
	})
	t.Run("token in the URL", func(t *testing.T) {
		t.Parallel()
		u := strings.Replace(srv.URL, "http://", "http://x-access-token:"+wrong+"@", 1)
		dir := filepath.Join(t.TempDir(), "pub.git")
		_, err := Clone(context.Background(), u, dir, CloneOptions{Branches: []string{botBranch}})
		if err == nil || !strings.Contains(err.Error(), "pass the token as Token") {
			t.Fatalf("err = %v, want a refusal of a URL with a token", err)
		}
		assertNoSecret(t, err.Error(), wrong, "the error")
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Fatal("a refused clone left a directory")
		}
	})
	t.Run("redaction of git's own output", func(t *testing.T) {
		t.Parallel()
		g := &gitRunner{dir: t.TempDir(), token: wrong}
		gittest.Git(t, g.dir, "init", "--quiet")
		header := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + wrong))
		// git echoes what it was given in some errors; feed it the secret in all forms.
		_, err := g.run(context.Background(), gitOpts{}, "rev-parse", wrong, header)
		if err == nil {
			t.Fatal("rev-parse of nonsense succeeded")
		}
		assertNoSecret(t, err.Error(), wrong, "the error")
		assertNoSecret(t, err.Error(), header, "the error")
		if !strings.Contains(err.Error(), "***") {
			t.Fatalf("error %q shows no redaction: the check above proves nothing", err)
		}
	})
}

func assertNoSecret(t *testing.T, text, secret, where string) {
	t.Helper()
	if strings.Contains(text, secret) {
		t.Fatalf("the token appears in %s:\n%s", where, text)
	}
	if enc := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + secret)); strings.Contains(text, enc) {
		t.Fatalf("the encoded token appears in %s:\n%s", where, text)
	}
}
