package server

import "github.com/prometheus/client_golang/prometheus"

// metrics are the server's own series; the ingress registers its own
// (perfbot_webhook_*) and the queue reports perfbot_queue_depth.
type metrics struct {
	processed       *prometheus.CounterVec
	processSeconds  *prometheus.HistogramVec
	decisions       *prometheus.CounterVec
	dispatches      *prometheus.CounterVec
	dispatchLatency *prometheus.HistogramVec
	runs            *prometheus.CounterVec
	sweeps          *prometheus.CounterVec
	redeliveries    prometheus.Counter
}

func newMetrics() *metrics {
	return &metrics{
		processed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfbot_deliveries_processed_total",
			Help: "Delivery processing attempts, by event and result (done, retry, failed).",
		}, []string{"event", "result"}),
		processSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "perfbot_delivery_processing_seconds", Help: "Time to process one delivery.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"event"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfbot_commands_total",
			Help: "Gate decisions on comments, by outcome (accepted, denied, ignored) and reason.",
		}, []string{"outcome", "reason"}),
		dispatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfbot_dispatches_total",
			Help: "Workflow dispatches, by host and result (sent, refused, retry, found).",
		}, []string{"host", "result"}),
		dispatchLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "perfbot_dispatch_latency_seconds", Help: "Time from accepting a request to GitHub accepting its dispatch.",
			Buckets: prometheus.ExponentialBuckets(0.05, 4, 12),
		}, []string{"host"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfbot_runs_finished_total",
			Help: "Requests that ended, by host and state (done, failed, cancelled).",
		}, []string{"host", "state"}),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfbot_sweeps_total", Help: "Sweeps of the App's recent deliveries, by result (ok, error).",
		}, []string{"result"}),
		redeliveries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perfbot_redeliveries_requested_total", Help: "Failed deliveries the sweep asked GitHub to send again.",
		}),
	}
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.processed, m.processSeconds, m.decisions, m.dispatches, m.dispatchLatency, m.runs, m.sweeps, m.redeliveries}
}
