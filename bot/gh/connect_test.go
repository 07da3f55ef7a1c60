package gh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/fakegithub"
)

// An App without an installation id finds its installation on the repository with its
// JWT, then acts as that installation.
func TestConnectFindsTheRepoInstallation(t *testing.T) {
	t.Parallel()
	key, pemKey := appKey(t)
	s := fakegithub.New(t)
	s.Expect("GET", "/repos/lablup/mlxcel/installation", fakegithub.JSONFileWith(200, example(t, "installation"), map[string]any{"id": installationID})).
		Match(appJWT(key))
	s.Expect("POST", fmt.Sprintf("/app/installations/%d/access_tokens", installationID),
		fakegithub.JSONFileWith(201, example(t, "installation-token"), map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})).
		Match(appJWT(key))
	c, err := Connect(context.Background(), Credentials{AppID: appID, PrivateKeyPEM: pemKey, Repo: testRepo}, Options{BaseURL: s.URL(), Login: botLogin})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.GitToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "git token", tok, installationToken)
}

func TestConnectErrors(t *testing.T) {
	t.Parallel()
	_, pemKey := appKey(t)
	s := fakegithub.New(t)
	s.Expect("GET", "/repos/lablup/mlxcel/installation", fakegithub.JSON(404, map[string]string{"message": "Not Found"}))
	_, err := Connect(context.Background(), Credentials{AppID: appID, PrivateKeyPEM: pemKey, Repo: testRepo}, Options{BaseURL: s.URL(), Login: botLogin})
	if err == nil || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "the App is not installed on lablup/mlxcel") {
		t.Errorf("no installation: %v", err)
	}
	for _, c := range []struct {
		name string
		cred Credentials
		want string
	}{
		{"no token", Credentials{}, "no GitHub token"},
		{"bad key", Credentials{AppID: appID, PrivateKeyPEM: []byte("not a key"), Repo: testRepo}, "parsing the GitHub App private key"},
		{"bad repo", Credentials{AppID: appID, PrivateKeyPEM: pemKey, Repo: Repo{Owner: "a b", Name: "c"}}, "finding the App's installation on a b/c"},
	} {
		if _, err := Connect(context.Background(), c.cred, Options{BaseURL: "http://127.0.0.1:1/api/v3/", Login: botLogin}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
