package server

import (
	"context"
	"sync"

	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gh"
)

// installations hands out the API client of each App installation, one per
// installation so its token and rate-limit memory are reused.
type installations struct {
	app *gh.AppTransport

	mu      sync.Mutex
	clients map[int64]ghClient
}

// ghClient is an installation's *gh.Client as the server's parts ask it: every
// consumer interface (commandAPI, runAPI, markAPI) is a subset of its methods.
type ghClient struct{ *gh.Client }

// Reply answers a command comment in its one marked reply.
func (c ghClient) Reply(ctx context.Context, ev gate.Event, text string) error {
	return gate.Reply(ctx, c.Client, ev, text)
}

var (
	_ commandAPI = ghClient{}
	_ runAPI     = ghClient{}
	_ markAPI    = ghClient{}
)

func (in *installations) client(installation int64) (ghClient, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.clients[installation]; ok {
		return c, nil
	}
	c, err := in.app.Installation(installation)
	if err != nil {
		return ghClient{}, err
	}
	in.clients[installation] = ghClient{c}
	return in.clients[installation], nil
}

// apiOf adapts installations.client to the API a part of the server wants.
func apiOf[API any](in *installations) func(int64) (API, error) {
	return func(id int64) (API, error) {
		c, err := in.client(id)
		if err != nil {
			var none API
			return none, err
		}
		return any(c).(API), nil
	}
}
