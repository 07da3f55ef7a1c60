// Package webhook is the server's front door for GitHub webhook deliveries: it bounds
// the body (25 MB, GitHub's own cap) and the body bytes held across all requests
// before their signature is checked (503 beyond, the body unread), requires the X-Hub-Signature-256 HMAC and checks
// it in constant time, refuses events and payloads it cannot read, and stores each
// delivery in the inbox before answering 2xx. It answers fast and does no work of its
// own; the inbox's workers do (docs/server.md §2).
//
// It never falls back to the SHA-1 signature and never skips the check: go-github's
// ValidatePayload does both when the secret is empty or only the old header came, so
// it is not used. It must not call GitHub, parse commands or log payloads or secrets.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/prometheus/client_golang/prometheus"
)

// MaxBody is GitHub's cap on a webhook payload (25 MB); a larger body is refused.
const MaxBody = 25 << 20

// Header names GitHub sends.
const (
	HeaderEvent     = "X-GitHub-Event"
	HeaderDelivery  = "X-GitHub-Delivery"
	HeaderSignature = "X-Hub-Signature-256"
)

// Store keeps deliveries; *inbox.Inbox is one.
type Store interface {
	Put(ctx context.Context, d inbox.Delivery) (inbox.Outcome, error)
}

// Options configures the handler.
type Options struct {
	// Secret is the webhook secret set on the App. It must not be empty.
	Secret []byte
	// Store receives the deliveries of Handled events.
	Store Store
	// Handled are the events stored for processing. Other events go-github knows are
	// checked the same way, then answered 200 and dropped; events it does not know are
	// refused with 400.
	Handled []string
	// Actions narrows a handled event to some of its actions (check_run: rerequested):
	// a delivery of another action is checked the same way, then answered 200 and
	// dropped, not stored. An event not listed is stored whatever its action.
	Actions map[string][]string
	// Admit says whether the backlog has room; when it says no the answer is 503
	// and GitHub records a failed delivery that can be redelivered. nil admits all.
	Admit func() bool
	// Stored is told about each delivery committed to the store (to wake workers).
	Stored func(inbox.Delivery, inbox.Outcome)
	// MaxBody bounds the request body; 0 means MaxBody.
	MaxBody int64
	// BodyBudget bounds the body bytes held across all requests before their
	// signatures are checked; 0 means DefaultBodyBudget. Bodies over 1 MiB may use
	// three quarters of it, so GitHub's usual deliveries always find room. A delivery
	// that does not fit is answered 503 with Retry-After, its body unread.
	BodyBudget int64
	// Logger receives one line per delivery. Default: none.
	Logger *slog.Logger
	// Registerer receives the handler's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Handler is the webhook endpoint, an http.Handler.
type Handler struct {
	o       Options
	handled map[string]bool
	m       metrics
	budget  *budget
}

type metrics struct {
	deliveries *prometheus.CounterVec
	duplicates prometheus.Counter
	rejections *prometheus.CounterVec
	seconds    prometheus.Histogram
}

// New checks the options and returns the handler. An empty secret is refused: with
// it anybody could post deliveries.
func New(o Options) (*Handler, error) {
	if len(o.Secret) == 0 {
		return nil, errors.New("the webhook secret is empty: set it (the same value as on the App's settings page) so deliveries can be verified")
	}
	if o.Store == nil {
		return nil, errors.New("the webhook handler needs a store")
	}
	if o.MaxBody <= 0 {
		o.MaxBody = MaxBody
	}
	if o.BodyBudget <= 0 {
		o.BodyBudget = DefaultBodyBudget
	}
	// A body over a chunk reserves whole chunks.
	if o.BodyBudget-o.BodyBudget/4 < (o.MaxBody+chunkSize-1)/chunkSize*chunkSize {
		return nil, fmt.Errorf("a body budget of %d bytes cannot hold a %d-byte delivery: large bodies may use three quarters of it", o.BodyBudget, o.MaxBody)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{o: o, handled: map[string]bool{}, budget: newBudget(o.BodyBudget)}
	for _, e := range o.Handled {
		if github.EventForType(e) == nil {
			return nil, fmt.Errorf("handled event %q is not a GitHub webhook event", e)
		}
		h.handled[e] = true
	}
	h.m = metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfbot_webhook_deliveries_total",
			Help: "Webhook deliveries answered 2xx, by event and outcome (stored, requeued, duplicate, ignored).",
		}, []string{"event", "outcome"}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perfbot_webhook_duplicates_total",
			Help: "Deliveries whose id the inbox already held as received or done (answered 200, not processed again).",
		}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfbot_webhook_rejections_total",
			Help: "Deliveries refused, by reason.",
		}, []string{"reason"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "perfbot_webhook_answer_seconds",
			Help:    "Time from receiving a delivery to answering it.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}),
	}
	if o.Registerer != nil {
		held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "perfbot_webhook_unverified_body_bytes",
			Help: "Body bytes held by deliveries whose signature is not checked yet (bounded by the body budget).",
		}, func() float64 { return float64(h.budget.held()) })
		for _, c := range []prometheus.Collector{h.m.deliveries, h.m.duplicates, h.m.rejections, h.m.seconds, held} {
			if err := o.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("registering the webhook metrics: %w", err)
			}
		}
	}
	return h, nil
}

// Rejection is a delivery refused with an HTTP status; the reason is a metric label.
type Rejection struct {
	Status int
	Reason string // short, stable: bad_signature, unknown_event ...
	Msg    string // what was wrong, for the answer body and the log
}

func (r *Rejection) Error() string { return r.Msg }

func reject(status int, reason, format string, a ...any) error {
	return &Rejection{Status: status, Reason: reason, Msg: fmt.Sprintf(format, a...)}
}

// Verify checks an X-Hub-Signature-256 header ("sha256=" and 64 hex digits) against
// the HMAC-SHA256 of body under secret, in constant time.
func Verify(secret, body []byte, header string) error {
	if len(secret) == 0 {
		return errors.New("no webhook secret to verify with")
	}
	sig, err := signature(header)
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return checkMAC(mac, sig)
}

// Sign returns the X-Hub-Signature-256 value of body under secret, as GitHub sends it.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// ServeHTTP answers one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	event, id := r.Header.Get(HeaderEvent), r.Header.Get(HeaderDelivery)
	log := h.o.Logger.With(logkey.Delivery, clean(id), logkey.Event, clean(event))
	status, msg := h.serve(r, log)
	h.m.seconds.Observe(time.Since(start).Seconds())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "60")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

func (h *Handler) serve(r *http.Request, log *slog.Logger) (int, string) {
	d, err := h.read(r)
	if err == nil && (!h.handled[d.Event] || !h.wanted(d.Event, d.Action)) {
		h.m.deliveries.WithLabelValues(d.Event, "ignored").Inc()
		log.Debug("webhook: event not handled; ignored")
		if h.handled[d.Event] {
			return http.StatusOK, "ignored: perfbot does not act on " + d.Event + " " + clean(d.Action) + " events"
		}
		return http.StatusOK, "ignored: perfbot does not act on " + d.Event + " events"
	}
	if err == nil && h.o.Admit != nil && !h.o.Admit() {
		err = reject(http.StatusServiceUnavailable, "backlog_full", "the backlog is full; redeliver later")
	}
	if err == nil {
		var out inbox.Outcome
		out, err = h.o.Store.Put(r.Context(), d)
		if err != nil {
			log.Error("webhook: storing the delivery failed", "error", err)
			err = reject(http.StatusInternalServerError, "store_error", "the delivery could not be stored; redeliver it")
		} else {
			h.m.deliveries.WithLabelValues(d.Event, out.String()).Inc()
			log = log.With(logkey.Repo, d.Repo, "action", d.Action, "outcome", out.String())
			if out == inbox.Duplicate {
				h.m.duplicates.Inc()
				log.Info("webhook: delivery already held; not processed again")
				return http.StatusOK, "duplicate: delivery " + d.ID + " is already held"
			}
			log.Info("webhook: delivery stored")
			if h.o.Stored != nil {
				h.o.Stored(d, out)
			}
			return http.StatusAccepted, out.String() + ": delivery " + d.ID
		}
	}
	var rej *Rejection
	if !errors.As(err, &rej) {
		rej = &Rejection{Status: http.StatusInternalServerError, Reason: "internal", Msg: err.Error()}
	}
	h.m.rejections.WithLabelValues(rej.Reason).Inc()
	log.Warn("webhook: delivery refused", "status", rej.Status, "reason", rej.Reason, "error", rej.Msg)
	return rej.Status, rej.Msg
}

// wanted reports whether an action of a handled event is stored (Options.Actions).
func (h *Handler) wanted(event, action string) bool {
	list, ok := h.o.Actions[event]
	if !ok {
		return true
	}
	for _, a := range list {
		if a == action {
			return true
		}
	}
	return false
}

// read checks one request and returns the delivery it carries.
func (h *Handler) read(r *http.Request) (inbox.Delivery, error) {
	if r.Method != http.MethodPost {
		return inbox.Delivery{}, reject(http.StatusMethodNotAllowed, "method", "deliveries are POSTed")
	}
	event, id := r.Header.Get(HeaderEvent), r.Header.Get(HeaderDelivery)
	if event == "" || id == "" {
		return inbox.Delivery{}, reject(http.StatusBadRequest, "headers", "missing %s or %s: not a GitHub delivery", HeaderEvent, HeaderDelivery)
	}
	if !validID(id) {
		return inbox.Delivery{}, reject(http.StatusBadRequest, "delivery_id", "%s is not a delivery id (a GUID)", HeaderDelivery)
	}
	sig := r.Header.Get(HeaderSignature)
	if sig == "" {
		return inbox.Delivery{}, reject(http.StatusUnauthorized, "no_signature", "missing %s: set a webhook secret on the App (SHA-1 signatures are not accepted)", HeaderSignature)
	}
	want, err := signature(sig)
	if err != nil {
		return inbox.Delivery{}, reject(http.StatusUnauthorized, "bad_signature", "%v", err)
	}
	if r.ContentLength > h.o.MaxBody {
		return inbox.Delivery{}, reject(http.StatusRequestEntityTooLarge, "too_large", "the body has %d bytes; at most %d are accepted", r.ContentLength, h.o.MaxBody)
	}
	// The body is read within the budget of unauthenticated bytes, the HMAC computed
	// as it arrives; beyond the budget the answer is 503 and the body is not read.
	mac := hmac.New(sha256.New, h.o.Secret)
	held, err := h.readBody(r, mac)
	defer held.release()
	switch {
	case errors.Is(err, errBusy):
		return inbox.Delivery{}, reject(http.StatusServiceUnavailable, "busy", "too many large deliveries are being received at once; redeliver later")
	case errors.Is(err, errTooLarge):
		return inbox.Delivery{}, reject(http.StatusRequestEntityTooLarge, "too_large", "the body is over %d bytes", h.o.MaxBody)
	case err != nil:
		return inbox.Delivery{}, reject(http.StatusBadRequest, "unreadable", "reading the body: %v", err)
	}
	// Authenticate before looking at anything in the body.
	if err := checkMAC(mac, want); err != nil {
		return inbox.Delivery{}, reject(http.StatusUnauthorized, "bad_signature", "%v", err)
	}
	body := held.bytes()
	held.release() // authenticated: the bytes no longer count against the budget
	proto := github.EventForType(event)
	if proto == nil {
		return inbox.Delivery{}, reject(http.StatusBadRequest, "unknown_event", "unknown event %q", clean(event))
	}
	payload, err := jsonPayload(r.Header.Get("Content-Type"), body)
	if err != nil {
		return inbox.Delivery{}, err
	}
	// The typed decode is the check that the payload is one perfbot can read later:
	// refusing it now (400) is better than failing it in the background.
	if err := json.Unmarshal(payload, proto); err != nil {
		return inbox.Delivery{}, reject(http.StatusBadRequest, "bad_payload", "the %s payload cannot be read: %v", clean(event), err)
	}
	action, installation, repo := head(proto)
	if h.handled[event] && installation <= 0 {
		return inbox.Delivery{}, reject(http.StatusBadRequest, "no_installation", "the %s payload has no installation: not a GitHub App delivery", clean(event))
	}
	return inbox.Delivery{ID: id, Event: event, Action: action, Installation: installation, Repo: repo, Payload: payload}, nil
}

// head reads the action, installation and repository of a decoded event through the
// accessors go-github gives most event types, so the payload is decoded only once.
func head(ev any) (action string, installation int64, repo string) {
	if e, ok := ev.(interface{ GetAction() string }); ok {
		action = e.GetAction()
	}
	if e, ok := ev.(interface{ GetInstallation() *github.Installation }); ok {
		installation = e.GetInstallation().GetID()
	}
	if e, ok := ev.(interface{ GetRepo() *github.Repository }); ok {
		repo = e.GetRepo().GetFullName()
	}
	return action, installation, repo
}

// jsonPayload returns the JSON of a body sent as application/json or as the payload
// field of a form, the two content types GitHub offers.
func jsonPayload(contentType string, body []byte) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil && contentType != "" {
		return nil, reject(http.StatusBadRequest, "content_type", "content type %q cannot be read", clean(contentType))
	}
	switch mt {
	case "application/json", "":
		return body, nil
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, reject(http.StatusBadRequest, "bad_payload", "the form body cannot be read: %v", err)
		}
		p := form.Get("payload")
		if p == "" {
			return nil, reject(http.StatusBadRequest, "bad_payload", "the form body has no payload field")
		}
		return []byte(p), nil
	}
	return nil, reject(http.StatusBadRequest, "content_type", "content type %q is neither application/json nor a form", clean(mt))
}

// validID accepts what GitHub sends as a delivery id: a GUID of hex digits and
// hyphens. The id becomes a database key and a log value, so nothing else passes.
func validID(s string) bool {
	if len(s) < 8 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

// clean bounds a header value before it reaches a log line or an answer.
func clean(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}
