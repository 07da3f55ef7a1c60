package gh

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/fakegithub"
)

const (
	appID          = 42
	installationID = 7
	// The token in GitHub's documented installation-token example.
	installationToken = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

// appKey generates one RSA key per test binary; generating is the slow part.
func appKey(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(testKey)})
}

// appJWT checks that a request is authenticated as the App: an RS256 JWT signed with
// the App's key, issued by the App id.
func appJWT(key *rsa.PrivateKey) fakegithub.Matcher {
	return fakegithub.MatchFunc("App JWT", func(r fakegithub.Request) error {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return fmt.Errorf("authorization %q is not a bearer JWT", r.Header.Get("Authorization"))
		}
		parts := strings.Split(tok, ".")
		if len(parts) != 3 {
			return errors.New("not a JWT")
		}
		sig, err := base64.RawURLEncoding.DecodeString(parts[2])
		if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
			return fmt.Errorf("signature: %w", err)
		}
		var header struct{ Alg string }
		var claims struct {
			Iss string
			Iat int64
			Exp int64
		}
		h, _ := base64.RawURLEncoding.DecodeString(parts[0])
		c, _ := base64.RawURLEncoding.DecodeString(parts[1])
		if json.Unmarshal(h, &header) != nil || json.Unmarshal(c, &claims) != nil {
			return errors.New("undecodable JWT")
		}
		if header.Alg != "RS256" || claims.Iss != fmt.Sprint(appID) || claims.Exp-claims.Iat > 600 {
			return fmt.Errorf("header %+v claims %+v", header, claims)
		}
		return nil
	})
}

func newApp(t *testing.T, s *fakegithub.Stub, login string) *AppTransport {
	t.Helper()
	_, pemKey := appKey(t)
	tr, err := NewAppTransport(AppAuth{AppID: appID, PrivateKeyPEM: pemKey}, Options{BaseURL: s.URL(), Login: login})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The installation token is minted once with the App's JWT and then carried by every
// call of that installation.
func TestAppInstallationMintsAndUsesToken(t *testing.T) {
	t.Parallel()
	key, _ := appKey(t)
	s := fakegithub.New(t)
	// ghinstallation checks expiry against the real clock; the documented example
	// expired in 2016.
	s.Expect("POST", fmt.Sprintf("/app/installations/%d/access_tokens", installationID),
		fakegithub.JSONFileWith(201, example(t, "installation-token"), map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})).
		Match(appJWT(key))
	s.Expect("GET", "/repos/lablup/mlxcel/collaborators/octocat/permission", fakegithub.JSONFile(200, example(t, "repository-collaborator-permission"))).
		Match(fakegithub.Header("Authorization", "token "+installationToken)).Times(2)

	c, err := newApp(t, s, botLogin).Installation(installationID)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := c.Permission(context.Background(), testRepo, "octocat")
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "permission", got, "admin")
	}
	// git pushes with the same installation token, without minting another one.
	tok, err := c.GitToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "git token", tok, installationToken)
}

func TestTokenClientGitToken(t *testing.T) {
	t.Parallel()
	c, err := NewTokenClient("ghp_secret\n", Options{BaseURL: "http://127.0.0.1:1/api/v3/", Login: "x"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.GitToken(context.Background())
	if err != nil || tok != "ghp_secret" {
		t.Fatalf("GitToken = %q, %v", tok, err)
	}
}

// Without Options.Login an installation finds its comments by the App's slug.
func TestAppLoginIsSlugBot(t *testing.T) {
	t.Parallel()
	key, _ := appKey(t)
	s := fakegithub.New(t)
	s.Expect("GET", "/app", fakegithub.JSONFile(200, example(t, "integration"))).Match(appJWT(key))
	s.Expect("POST", fmt.Sprintf("/app/installations/%d/access_tokens", installationID),
		fakegithub.JSONFileWith(201, example(t, "installation-token"), map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}))
	s.Expect("GET", commentsPath, fakegithub.JSON(200, []any{comment(t, 1, "perfbot[bot]", marker), comment(t, 2, "octoapp[bot]", marker)})).
		Match(fakegithub.Header("Authorization", "token "+installationToken))

	c, err := newApp(t, s, "").Installation(installationID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.FindCommentWithMarker(context.Background(), testRepo, 12, marker)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.ID != 2 || got.User != "octoapp[bot]" {
		t.Errorf("found %+v", got)
	}
}

func TestAppMintFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		resp   fakegithub.Responder
		is     error
		substr string
	}{
		{"not installed", fakegithub.JSON(404, map[string]string{"message": "Not Found"}), ErrNotFound,
			"minting an installation token for installation 7 (is the App installed on this account?): not found"},
		{"bad key", fakegithub.JSON(401, map[string]string{"message": "A JSON web token could not be decoded"}), nil,
			"the credentials were refused (GitHub answered 401: A JSON web token could not be decoded)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.New(t)
			s.Expect("POST", fmt.Sprintf("/app/installations/%d/access_tokens", installationID), c.resp)
			ic, err := newApp(t, s, botLogin).Installation(installationID)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ic.Permission(context.Background(), testRepo, "octocat")
			if err == nil || !strings.Contains(err.Error(), c.substr) {
				t.Fatalf("error %v, want %q", err, c.substr)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
		})
	}
}

func TestAppConfigErrors(t *testing.T) {
	t.Parallel()
	_, pemKey := appKey(t)
	cases := []struct {
		name string
		a    AppAuth
		want string
	}{
		{"no id", AppAuth{PrivateKeyPEM: pemKey}, "positive id"},
		{"no key", AppAuth{AppID: 1}, "no GitHub App private key"},
		{"garbage key", AppAuth{AppID: 1, PrivateKeyPEM: []byte("-----BEGIN RSA PRIVATE KEY-----\nnope\n-----END RSA PRIVATE KEY-----\n")}, "parsing the GitHub App private key"},
	}
	for _, c := range cases {
		if _, err := NewAppTransport(c.a, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	tr, err := NewAppTransport(AppAuth{AppID: 1, PrivateKeyPEM: pemKey}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Installation(0); err == nil || !strings.Contains(err.Error(), "not an App delivery") {
		t.Errorf("installation 0: %v", err)
	}
}

// Installations mint their tokens concurrently without racing on the shared App
// transport (run with -race).
func TestAppInstallationsConcurrently(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	tr := newApp(t, s, botLogin)
	expires := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var clients []*Client
	for _, id := range []int64{7, 8, 9} {
		s.Expect("POST", fmt.Sprintf("/app/installations/%d/access_tokens", id),
			fakegithub.JSONFileWith(201, example(t, "installation-token"), map[string]any{"expires_at": expires, "token": fmt.Sprintf("ghs_installation%d", id)}))
		s.Expect("GET", "/repos/lablup/mlxcel/collaborators/octocat/permission", fakegithub.JSONFile(200, example(t, "repository-collaborator-permission"))).
			Match(fakegithub.Header("Authorization", fmt.Sprintf("token ghs_installation%d", id)))
		c, err := tr.Installation(id)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for _, c := range clients {
		wg.Go(func() {
			_, err := c.Permission(context.Background(), testRepo, "octocat")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
