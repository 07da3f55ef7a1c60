package gh

import (
	"context"
	"errors"
	"fmt"
)

// Credentials say who perfbot acts as: a token, or a GitHub App by its id and private
// key. An App token opens pull requests whose CI runs; the Actions GITHUB_TOKEN does
// not (events it causes start no workflows).
type Credentials struct {
	Token         string
	AppID         int64
	PrivateKeyPEM []byte
	// InstallationID is the App's installation; 0 looks it up for Repo
	// (GET /repos/{owner}/{repo}/installation).
	InstallationID int64
	Repo           Repo
}

// Connect returns a Client acting with the credentials: as the App installation when
// an App id is given, else with the token.
func Connect(ctx context.Context, c Credentials, o Options) (*Client, error) {
	if c.AppID == 0 {
		return NewTokenClient(c.Token, o)
	}
	app, err := NewAppTransport(AppAuth{AppID: c.AppID, PrivateKeyPEM: c.PrivateKeyPEM}, o)
	if err != nil {
		return nil, err
	}
	id := c.InstallationID
	if id == 0 {
		if id, err = app.RepoInstallation(ctx, c.Repo); err != nil {
			return nil, err
		}
	}
	return app.Installation(id)
}

// RepoInstallation finds the id of the App's installation on a repository.
func (t *AppTransport) RepoInstallation(ctx context.Context, r Repo) (int64, error) {
	op := fmt.Sprintf("finding the App's installation on %s", r)
	if err := r.validate(); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	inst, _, err := t.app.api().Apps.FindRepositoryInstallation(t.app.ctx(ctx), r.Owner, r.Name)
	if err != nil {
		werr := wrap(err, op, "")
		if errors.Is(werr, ErrNotFound) {
			return 0, fmt.Errorf("the App is not installed on %s (install it there, or check the App id): %w", r, werr)
		}
		return 0, werr
	}
	if inst.GetID() <= 0 {
		return 0, fmt.Errorf("%s: GitHub answered without an installation id", op)
	}
	return inst.GetID(), nil
}
