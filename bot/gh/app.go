package gh

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-github/v62/github"
)

// AppInfo is what GitHub says about the App the credentials belong to.
type AppInfo struct {
	ID   int64
	Slug string
	Name string
}

// App asks GitHub who the App is (GET /app). A server calls it at start: it fails
// when GitHub refuses the App id or key, and the error says so.
func (t *AppTransport) App(ctx context.Context) (AppInfo, error) {
	app, _, err := t.app.api().Apps.Get(t.app.ctx(ctx), "")
	if err != nil {
		return AppInfo{}, wrap(err, "authenticating as the GitHub App (GET /app)", "")
	}
	if app.GetSlug() == "" || app.GetID() <= 0 {
		return AppInfo{}, errors.New("authenticating as the GitHub App: GET /app answered no id or slug")
	}
	t.mu.Lock()
	t.slug = app.GetSlug()
	t.mu.Unlock()
	return AppInfo{ID: app.GetID(), Slug: app.GetSlug(), Name: app.GetName()}, nil
}

// HookDelivery is one attempt to deliver one webhook event to the App.
type HookDelivery struct {
	ID          int64  // the attempt; redelivery is asked by this id
	GUID        string // the X-GitHub-Delivery id, the same for every attempt
	DeliveredAt time.Time
	Redelivery  bool
	StatusCode  int // the server's answer; 0 when it was not reached
	Event       string
	Action      string
}

// OK reports whether the attempt was answered 2xx.
func (d HookDelivery) OK() bool { return d.StatusCode >= 200 && d.StatusCode < 300 }

// HookDeliveries returns one page of the App's recent delivery attempts, newest
// first, and the cursor of the next page ("" at the end). GitHub offers no filter:
// callers stop paging at the time they care about.
func (t *AppTransport) HookDeliveries(ctx context.Context, cursor string, perPage int) ([]HookDelivery, string, error) {
	opts := &github.ListCursorOptions{Cursor: cursor, PerPage: perPage}
	list, resp, err := t.app.api().Apps.ListHookDeliveries(t.app.ctx(ctx), opts)
	if err != nil {
		return nil, "", wrap(err, "listing the App's webhook deliveries", "")
	}
	out := make([]HookDelivery, 0, len(list))
	for _, d := range list {
		out = append(out, HookDelivery{
			ID: d.GetID(), GUID: d.GetGUID(), DeliveredAt: d.GetDeliveredAt().Time, Redelivery: d.GetRedelivery(),
			StatusCode: d.GetStatusCode(), Event: d.GetEvent(), Action: d.GetAction(),
		})
	}
	return out, resp.Cursor, nil
}

// Redeliver asks GitHub to send a delivery attempt again (it answers 202). Asking
// twice sends it twice, with the same GUID: the receiver's inbox keeps one.
func (t *AppTransport) Redeliver(ctx context.Context, id int64) error {
	op := fmt.Sprintf("asking redelivery of webhook delivery %d", id)
	if id <= 0 {
		return fmt.Errorf("%s: want a positive delivery id", op)
	}
	api := t.app.api()
	req, err := api.NewRequest("POST", fmt.Sprintf("app/hook/deliveries/%d/attempts", id), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = api.Do(repeatable(t.app.ctx(ctx)), req, nil)
	if isAccepted(err) {
		err = nil
	}
	return wrap(err, op, "")
}

// isAccepted reports go-github's way of returning a 202 answer: as an error.
func isAccepted(err error) bool {
	var ae *github.AcceptedError
	return errors.As(err, &ae)
}

// MayHaveHappened reports whether a failed write may still have taken effect on
// GitHub (a server error or a broken connection, not a refusal): look before
// repeating it.
func MayHaveHappened(err error) bool { return ambiguous(err) }
