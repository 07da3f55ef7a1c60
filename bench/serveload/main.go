// Command serveload is the load generator of bench/serve.sh: it starts the real
// `perfbot serve` binary against a minimal GitHub API on 127.0.0.1, sends it signed
// copies of real webhook payloads (each with a fresh delivery id) from concurrent
// clients for a fixed time, waits for the inbox to drain, stops the server and counts
// in its database every delivery it answered 2xx. It prints the answer latencies and,
// last, `serve: N deliveries/s, p50 X ms, p99 Y ms, lost L`, where lost counts the
// deliveries not answered 2xx plus those answered 2xx but not processed, and the peak
// resident memory of the server (VmHWM).
//
// With --hostile N, N more clients send, for the whole run, bodies of --hostile-mb MB
// with forged signatures, each resent as soon as its answer comes: the signed
// deliveries must still be answered (and fast), and the server's memory must stay
// bounded by its body budget, not by N times the body size.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/bot/webhook"
)

const secret = "serveload secret"

// payloads are the real deliveries sent, round robin: comments that hold no perfbot
// command (the gate ignores them without calling GitHub), a deleted comment, and a
// completed workflow run that is not perfbot's. All are stored and processed.
var payloads = []struct{ event, file string }{
	{"issue_comment", "webhooks/issue_comment.created.json"},
	{"issue_comment", "webhooks-pr-comments/prow.issue_comment.created.pr.lgtm.json"},
	{"issue_comment", "webhooks/issue_comment.edited.json"},
	{"issue_comment", "webhooks-pr-comments/drone.issue_comment.created.pr.json"},
	{"issue_comment", "webhooks/issue_comment.deleted.json"},
	{"workflow_run", "webhooks/workflow_run.completed.json"},
	{"issue_comment", "webhooks-pr-comments/prow.issue_comment.created.pr.area-kubectl.json"},
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "forge" {
		forgeMain(os.Args[2:])
		return
	}
	bin := flag.String("bin", "", "the perfbot binary")
	data := flag.String("data", "testdata/real/github", "the real GitHub data folder")
	secs := flag.Int("secs", 30, "how long to send, in seconds")
	conc := flag.Int("conc", 64, "concurrent senders (at most this many deliveries in flight)")
	rate := flag.Int("rate", 500, "deliveries per second to send, spread evenly (open loop, as GitHub sends: a late answer does not slow the arrivals); 0 sends as fast as the answers come back")
	workers := flag.Int("workers", 4, "the server's workers")
	dir := flag.String("dir", "", "work folder (database, settings, log); default a temporary one")
	hostile := flag.Int("hostile", 0, "clients sending oversize bodies with forged signatures, each resent as soon as answered, for the whole run")
	hostileMB := flag.Int("hostile-mb", 24, "the size of each forged body, in MB (at most 25, the server's cap)")
	hostileNice := flag.Int("hostile-nice", 0, "run the forged-body clients in a child process at this niceness (1 to 19), so on a small machine the load generator's own CPU does not compete with the server's; 0 runs them in this process")
	hung := flag.Bool("hung", false, "GitHub never answers workflow dispatches: eight /profile rocm for one host are sent first, then a /perfbot help on another issue every 100 ms, whose replies are timed")
	flag.Parse()
	if *bin == "" || *secs <= 0 || *conc <= 0 || *hostile < 0 || *hostileMB <= 0 || *hostileMB > 25 || *hostileNice < 0 || *hostileNice > 19 {
		fmt.Fprintln(os.Stderr, "usage: serveload --bin PERFBOT [--secs N] [--conc C] [--data DIR] [--hostile N [--hostile-mb M]]")
		os.Exit(2)
	}
	if err := run(*bin, *data, *dir, *secs, *conc, *rate, *workers, *hostile, *hostileMB, *hostileNice, *hung); err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

func run(bin, data, dir string, secs, conc, rate, workers, hostile, hostileMB, hostileNice int, hung bool) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "serveload")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	bodies := make([][]byte, len(payloads))
	sigs := make([]string, len(payloads))
	for i, p := range payloads {
		b, err := os.ReadFile(filepath.Join(data, p.file))
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", p.file, err)
		}
		m["installation"] = map[string]any{"id": 1, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}
		if bodies[i], err = json.Marshal(m); err != nil {
			return err
		}
		// The signature covers the body only, which is the same for every delivery of
		// a payload: sign once, so the clients spend the machine's cores on sending.
		sigs[i] = webhook.Sign([]byte(secret), bodies[i])
	}
	var hg *hungGitHub
	if hung {
		hg = &hungGitHub{}
	}
	api, err := fakeAPI(filepath.Join(data, "rest-openapi-examples", "integration.json"), hg)
	if err != nil {
		return err
	}
	defer api.Close()

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	db := filepath.Join(dir, "perfbot.db")
	cfg := filepath.Join(dir, "serve.yml")
	settings := fmt.Sprintf("version: 1\nlisten: %s\ndatabase: %s\ngithub: {api_url: %q, app_id: 1, private_key_file: %s}\nhosts:\n  - {label: gfx1151, backend: rocm, workflow: perfbot.yml}\nworkers: %d\nbacklog: 1000000\n",
		addr, db, "http://"+api.Addr+"/", keyFile, workers)
	if err := os.WriteFile(cfg, []byte(settings), 0o600); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "PERFBOT_WEBHOOK_SECRET="+secret)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	base := "http://" + addr
	if err := waitUp(base, exited); err != nil {
		return err
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}, Timeout: 30 * time.Second}
	type result struct {
		id   string
		code int
		lat  time.Duration
	}
	results := make([][]result, conc)
	start := time.Now()
	stop := start.Add(time.Duration(secs) * time.Second)
	var forged func() string
	if hostile > 0 && hostileNice > 0 {
		if forged, err = forgeChild(base, hostile, hostileMB<<20, stop, hostileNice); err != nil {
			return err
		}
	} else {
		forged = sendForged(base, hostile, hostileMB<<20, stop)
	}
	helpSent := make(chan map[int64]time.Time, 1)
	if hg != nil {
		raw, err := os.ReadFile(filepath.Join(data, "webhooks/issue_comment.created.json"))
		if err != nil {
			return err
		}
		go func() {
			sent, err := sendHung(base, raw, hungProfiles, 100*time.Millisecond, stop)
			if err != nil {
				fmt.Fprintln(os.Stderr, "serveload: hung mode:", err)
			}
			helpSent <- sent
		}()
	}
	// Open loop: delivery i is due at start + i/rate, and its latency counts from then,
	// so a slow answer that delays the next send is charged to the server.
	due := make(chan time.Time, conc)
	go func() {
		defer close(due)
		for i := 0; ; i++ {
			at := time.Now()
			if rate > 0 {
				at = start.Add(time.Duration(i) * time.Second / time.Duration(rate))
				if d := time.Until(at); d > 0 {
					time.Sleep(d)
				}
			}
			if at.After(stop) {
				return
			}
			due <- at
		}
	}()
	var wg sync.WaitGroup
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := w
			for at := range due {
				p := i % len(payloads)
				i += conc
				id := guid()
				req, _ := http.NewRequest("POST", base+"/webhook", bytes.NewReader(bodies[p]))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("User-Agent", "GitHub-Hookshot/serveload")
				req.Header.Set(webhook.HeaderEvent, payloads[p].event)
				req.Header.Set(webhook.HeaderDelivery, id)
				req.Header.Set(webhook.HeaderSignature, sigs[p])
				if rate == 0 {
					at = time.Now()
				}
				resp, err := client.Do(req)
				lat := time.Since(at)
				code := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					code = resp.StatusCode
				}
				results[w] = append(results[w], result{id, code, lat})
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	forgedAnswers := forged()

	// Let the workers drain the inbox, then stop the server and read its database.
	drainStart := time.Now()
	if err := waitDrained(base, 120*time.Second); err != nil {
		return err
	}
	drain := time.Since(drainStart)
	inServer := serverAnswerTimes(base)
	cpu := cpuSeconds(cmd.Process.Pid)
	peakRSS := peakRSSMB(cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("perfbot serve did not stop within 30 s of SIGTERM")
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		return err
	}
	defer st.Close()
	done := map[string]bool{}
	rows, err := st.Read().Query(`SELECT id FROM deliveries WHERE state = 'done'`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		done[id] = true
	}
	rows.Close()

	var lats []time.Duration
	codes := map[int]int{}
	lost, total := 0, 0
	for _, rs := range results {
		for _, r := range rs {
			total++
			codes[r.code]++
			lats = append(lats, r.lat)
			if r.code/100 != 2 || !done[r.id] {
				lost++
			}
		}
	}
	slices.Sort(lats)
	pct := func(p float64) float64 {
		if len(lats) == 0 {
			return 0
		}
		return float64(lats[min(len(lats)-1, int(p*float64(len(lats))))].Microseconds()) / 1000
	}
	var cs []string
	for c, n := range codes {
		cs = append(cs, fmt.Sprintf("%d: %d", c, n))
	}
	slices.Sort(cs)
	mode := fmt.Sprintf("paced at %d/s", rate)
	if rate == 0 {
		mode = "as fast as answered"
	}
	fmt.Printf("sent %d signed deliveries in %.1f s, %s, from up to %d clients (answers %s); inbox drained %.1f s after the last\n",
		total, elapsed.Seconds(), mode, conc, strings.Join(cs, ", "), drain.Seconds())
	fmt.Printf("answer latency: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n", pct(0.5), pct(0.9), pct(0.99), pct(1))
	fmt.Printf("inside the server (perfbot_webhook_answer_seconds): %s\n", inServer)
	if cpu > 0 && total > 0 {
		fmt.Printf("server CPU: %.2f s in all, %.0f us per delivery (ingress and processing)\n", cpu, 1e6*cpu/float64(total))
	}
	if hg != nil {
		fmt.Printf("hung GitHub: %s\n", hg.summary(<-helpSent))
	}
	if hostile > 0 {
		where := "in this process"
		if hostileNice > 0 {
			where = fmt.Sprintf("in a child process at nice %d", hostileNice)
		}
		fmt.Printf("hostile: %d clients (%s) resending %d MB bodies with forged signatures: %s\n", hostile, where, hostileMB, forgedAnswers)
	}
	fmt.Printf("serve: %.0f deliveries/s, p50 %.1f ms, p99 %.1f ms, lost %d, peak RSS %.0f MB\n", float64(total)/elapsed.Seconds(), pct(0.5), pct(0.99), lost, peakRSS)
	return nil
}

func guid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// fakeAPI answers the two calls a server makes with no command to act on: who the
// App is (the documented example) and the sweep's delivery list (empty); with hung,
// also what a /profile and a /perfbot help need, never answering a dispatch.
func fakeAPI(appExample string, hung *hungGitHub) (*http.Server, error) {
	app, err := os.ReadFile(appExample)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(app)
	})
	mux.HandleFunc("GET /app/hook/deliveries", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	})
	if hung != nil {
		var info struct {
			Slug string `json:"slug"`
		}
		if err := json.Unmarshal(app, &info); err != nil {
			return nil, err
		}
		hung.routes(mux, info.Slug)
	}
	srv := &http.Server{Handler: mux, Addr: ln.Addr().String(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

func waitUp(base string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("perfbot serve exited at start (see its log)")
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("perfbot serve did not answer /healthz within 30 s")
}

// waitDrained polls /metrics until the inbox backlog is 0.
func waitDrained(base string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), "\nperfbot_inbox_backlog 0\n") {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the inbox did not drain within %s", limit)
}

// serverAnswerTimes summarises the server's own answer-time histogram: the share of
// answers within each bucket bound, which tells the server's time from the queueing
// of a loaded machine.
func serverAnswerTimes(base string) string {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return "unavailable"
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var total float64
	buckets := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "perfbot_webhook_answer_seconds_count "); ok {
			fmt.Sscan(v, &total)
		}
		if rest, ok := strings.CutPrefix(line, `perfbot_webhook_answer_seconds_bucket{le="`); ok {
			le, v, _ := strings.Cut(rest, `"} `)
			var n float64
			fmt.Sscan(v, &n)
			buckets[le] = n
		}
	}
	if total == 0 {
		return "no answers"
	}
	var parts []string
	for _, le := range []string{"0.001", "0.005", "0.01", "0.05"} {
		parts = append(parts, fmt.Sprintf("%.1f %% within %s ms", 100*buckets[le]/total, strings.TrimSuffix(strings.TrimPrefix(fmt.Sprint(1000*atof(le)), ""), ".0")))
	}
	return strings.Join(parts, ", ")
}

func atof(s string) float64 {
	var f float64
	fmt.Sscan(s, &f)
	return f
}

// sendForged starts n clients that send bodies of size bytes with a wrong signature
// until stop, each sending the next as soon as the previous one is answered (or its
// connection is closed). The function it returns waits for them and summarises the
// answers.
func sendForged(base string, n, size int, stop time.Time) func() string {
	if n == 0 {
		return func() string { return "" }
	}
	body := bytes.Repeat([]byte(" "), size)
	copy(body, `{"action":"created","comment":{"body":"`)
	forged := "sha256=" + strings.Repeat("0f", 32)
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: 2 * time.Minute}
			for time.Now().Before(stop) {
				req, _ := http.NewRequest("POST", base+"/webhook", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(webhook.HeaderEvent, "issue_comment")
				req.Header.Set(webhook.HeaderDelivery, guid())
				req.Header.Set(webhook.HeaderSignature, forged)
				resp, err := client.Do(req)
				what := "connection closed before an answer"
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					what = fmt.Sprint(resp.StatusCode)
				}
				mu.Lock()
				answers[what]++
				mu.Unlock()
			}
		}()
	}
	return func() string {
		wg.Wait()
		var parts []string
		for k, v := range answers {
			parts = append(parts, fmt.Sprintf("%s: %d", k, v))
		}
		slices.Sort(parts)
		return strings.Join(parts, ", ")
	}
}

// forgeChild runs sendForged in a child process (this binary, "forge") under nice.
func forgeChild(base string, n, size int, stop time.Time, nice int) (func() string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("nice", "-n", fmt.Sprint(nice), self, "forge", base, fmt.Sprint(n), fmt.Sprint(size), fmt.Sprint(stop.UnixNano()))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the forged-body clients: %w", err)
	}
	return func() string {
		if err := cmd.Wait(); err != nil {
			return fmt.Sprintf("the child failed: %v", err)
		}
		return strings.TrimSpace(out.String())
	}, nil
}

// forgeMain is the child of forgeChild: BASE N SIZE STOP_UNIX_NANO.
func forgeMain(args []string) {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: serveload forge BASE N SIZE STOP_UNIX_NANO")
		os.Exit(2)
	}
	var n, size int
	var stop int64
	fmt.Sscan(args[1], &n)
	fmt.Sscan(args[2], &size)
	fmt.Sscan(args[3], &stop)
	fmt.Println(sendForged(args[0], n, size, time.Unix(0, stop))())
}

// peakRSSMB is the peak resident memory of a process (VmHWM), in MB (0 when it
// cannot be read).
func peakRSSMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb / 1024
		}
	}
	return 0
}

// cpuSeconds is the user and system CPU time a process has used, from /proc (0 when
// it cannot be read).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	var utime, stime float64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return (utime + stime) / 100 // USER_HZ
}
