package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/webhook"
)

// hungGitHub is the rest of the API a /profile and a /perfbot help need, with one
// fault: it takes every workflow dispatch and never answers it (the server gives up
// after its github.timeout_secs). It records when each reply to a comment arrives.
type hungGitHub struct {
	mu         sync.Mutex
	replied    map[int64]time.Time // comment id -> when its reply was posted
	dispatches int
	held       []time.Duration // how long each dispatch was held before the server gave up
	nextID     int64
}

// hungProfiles is how many /profile comments the hung mode sends first: more than
// the server's workers, so workers that waited for the host's dispatch would all be
// held.
const hungProfiles = 8

var replyMarker = regexp.MustCompile(`<!-- perfbot:reply (\d+) -->`)

func (g *hungGitHub) routes(mux *http.ServeMux, slug string) {
	g.replied = map[int64]time.Time{}
	g.nextID = 100000
	jsonAnswer := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 201, map[string]any{"token": "ghs_serveload", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/contents/.github/perfbot.yml", func(w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 200, map[string]any{"type": "file", "encoding": "base64", "name": "perfbot.yml", "path": ".github/perfbot.yml",
			"size": len(gatetest.Config), "content": base64.StdEncoding.EncodeToString([]byte(gatetest.Config))})
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/collaborators/{user}/permission", func(w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 200, map[string]any{"permission": "write", "role_name": "write", "user": map[string]any{"login": r.PathValue("user")}})
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/git/ref/{ref...}", func(w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 200, map[string]any{"ref": "refs/" + r.PathValue("ref"), "object": map[string]any{"sha": gatetest.MasterSHA, "type": "commit"}})
	})
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/comments/{id}/reactions", func(w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 201, map[string]any{"id": 1, "content": "eyes"})
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 200, []any{})
	})
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		var c struct {
			Body string `json:"body"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&c)
		g.mu.Lock()
		g.nextID++
		id := g.nextID
		if m := replyMarker.FindStringSubmatch(c.Body); m != nil {
			cid, _ := strconv.ParseInt(m[1], 10, 64)
			g.replied[cid] = time.Now()
		}
		g.mu.Unlock()
		jsonAnswer(w, 201, map[string]any{"id": id, "body": c.Body, "user": map[string]any{"login": slug + "[bot]", "type": "Bot"}})
	})
	mux.HandleFunc("POST /repos/{owner}/{repo}/actions/workflows/{wf}/dispatches", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		g.mu.Lock()
		g.dispatches++
		g.mu.Unlock()
		// Read the body, so net/http watches the connection and ends the request's
		// context when the server hangs up.
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		<-r.Context().Done() // never answered: held until the server gives up
		g.mu.Lock()
		g.held = append(g.held, time.Since(start))
		g.mu.Unlock()
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/workflows/{wf}/runs", func(w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 200, map[string]any{"total_count": 0, "workflow_runs": []any{}})
	})
}

// commentDelivery is a real issue_comment payload with the App's installation, a
// comment id, an issue number and a body of our choosing.
func commentDelivery(raw []byte, issue int, commentID int64, text string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["installation"] = map[string]any{"id": 1, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}
	m["issue"].(map[string]any)["number"] = issue
	c := m["comment"].(map[string]any)
	c["id"], c["body"] = commentID, text
	return json.Marshal(m)
}

// sendHung posts profiles /profile rocm comments (all for the one host: the first
// one's dispatch is never answered, the others queue behind it), then a /perfbot help
// on another issue every interval until stop. It returns the send time of each help
// comment by comment id.
func sendHung(base string, raw []byte, profiles int, interval time.Duration, stop time.Time) (map[int64]time.Time, error) {
	post := func(body []byte) error {
		req, _ := http.NewRequest("POST", base+"/webhook", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(webhook.HeaderEvent, "issue_comment")
		req.Header.Set(webhook.HeaderDelivery, guid())
		req.Header.Set(webhook.HeaderSignature, webhook.Sign([]byte(secret), body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("answered %d", resp.StatusCode)
		}
		return nil
	}
	for id := int64(1); id <= int64(profiles); id++ {
		profile, err := commentDelivery(raw, 1, id, "/profile rocm")
		if err != nil {
			return nil, err
		}
		if err := post(profile); err != nil {
			return nil, fmt.Errorf("a /profile comment: %w", err)
		}
	}
	sent := map[int64]time.Time{}
	for id := int64(1000); time.Now().Before(stop); id++ {
		help, err := commentDelivery(raw, 2, id, "/perfbot help")
		if err != nil {
			return nil, err
		}
		at := time.Now()
		if err := post(help); err == nil {
			sent[id] = at
		}
		time.Sleep(interval)
	}
	return sent, nil
}

// summary says how the help comments fared while the dispatch hung.
func (g *hungGitHub) summary(sent map[int64]time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var lats []time.Duration
	for id, at := range sent {
		if r, ok := g.replied[id]; ok {
			lats = append(lats, r.Sub(at))
		}
	}
	slices.Sort(lats)
	pct := func(p float64) float64 {
		if len(lats) == 0 {
			return 0
		}
		return float64(lats[min(len(lats)-1, int(p*float64(len(lats))))].Microseconds()) / 1000
	}
	gaveUp := "none yet"
	if len(g.held) > 0 {
		var held []string
		for _, h := range g.held {
			held = append(held, h.Round(100*time.Millisecond).String())
		}
		gaveUp = "after " + strings.Join(held, ", ")
	}
	return fmt.Sprintf("%d /profile rocm for one host, %d dispatch(es) never answered (the server gave up: %s; %d still waiting at the end); /perfbot help answered %d of %d meanwhile, p50 %.1f ms, p99 %.1f ms",
		hungProfiles, g.dispatches, gaveUp, g.dispatches-len(g.held), len(lats), len(sent), pct(0.5), pct(0.99))
}
