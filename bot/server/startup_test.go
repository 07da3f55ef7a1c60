package server_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestStartNetworkErrors: GitHub's API host accepting the connection and then never
// answering (a timeout), or closing it at once, is a network error naming the host;
// a 403 stays a refusal of the credentials; a secret of white space is refused before
// any call.
func TestStartNetworkErrors(t *testing.T) {
	t.Parallel()
	listen := func(t *testing.T, serve func(net.Conn)) string {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go serve(c)
			}
		}()
		return ln.Addr().String()
	}
	newServer := func(t *testing.T, apiURL string, secret []byte) error {
		t.Helper()
		set := settings(t, apiURL)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		srv, err := server.New(ctx, set, server.Options{Secret: secret, GitHub: gh.Options{MaxRetries: -1, Sleep: noSleep}})
		if err == nil {
			srv.Close()
		}
		return err
	}
	silent := listen(t, func(c net.Conn) {
		time.Sleep(5 * time.Second)
		c.Close()
	})
	hangup := listen(t, func(c net.Conn) { c.Close() })
	unanswered := listen(t, func(c net.Conn) {
		_, _ = c.Read(make([]byte, 4096)) // the request, then no answer
		c.Close()
	})
	for name, addr := range map[string]string{"timeout": silent, "closed connection": hangup, "request unanswered": unanswered} {
		err := newServer(t, "http://"+addr+"/api/v3/", secret)
		if err == nil || !strings.Contains(err.Error(), "network error: GitHub's API at "+addr+" could not be reached") ||
			strings.Contains(err.Error(), "refused the App's credentials") {
			t.Errorf("%s: %v, want a network error naming %s", name, err, addr)
		}
	}
	stub := fakegithub.New(t)
	stub.Expect("GET", "/app", fakegithub.JSON(403, map[string]string{"message": "Forbidden"}))
	if err := newServer(t, stub.URL(), secret); err == nil || !strings.Contains(err.Error(), "GitHub refused the App's credentials (github.app_id 1") {
		t.Errorf("403: %v, want the refusal of the credentials", err)
	}
	if err := newServer(t, stub.URL(), []byte(" \r\n\t")); err == nil || !strings.Contains(err.Error(), "only white space") {
		t.Errorf("white-space secret: %v, want a refusal", err)
	}
}
