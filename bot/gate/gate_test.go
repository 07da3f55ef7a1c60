package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/ghstub"
)

func client(t *testing.T, s *ghstub.Stub) *gh.Client {
	t.Helper()
	c, err := gh.NewTokenClient("ghs_testtoken0123456789", gh.Options{
		BaseURL: s.URL(), Login: "perfbot[bot]", MaxRetries: -1,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCases runs the shared table through Decide with the real API client against the
// API stub: every call the gate makes is one the case declares, answered as GitHub
// documents it.
func TestCases(t *testing.T) {
	t.Parallel()
	for _, c := range gatetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			s := ghstub.New(t)
			c.Expect(t, s)
			ev, err := gate.ParseEvent(c.Event(t))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			d, err := gate.Decide(ctx, ev, client(t, s), gate.Options{BotLogin: gatetest.BotLogin})
			if err != nil {
				t.Fatal(err)
			}
			c.Check(t, d)
		})
	}
}
