// Package logkey names the keys of the bot's structured log lines, so every package
// writes the same key for the same thing and a log query finds all of them. It holds
// constants only.
package logkey

// The keys of log/slog attributes.
const (
	Delivery = "delivery" // X-GitHub-Delivery
	Event    = "event"    // X-GitHub-Event
	Repo     = "repo"     // owner/name
	Issue    = "issue"    // issue or pull request number
	Request  = "request"  // a perfbot request id
	Run      = "run"      // a workflow run id
	Host     = "host"     // a GPU host's runner label
	Error    = "error"

	// Durations are written as whole milliseconds under a key ending in _ms (a
	// time.Duration would go to JSON as nanoseconds, with no unit in sight).
	WaitMS = "wait_ms" // how long the client waits before its next try
)
