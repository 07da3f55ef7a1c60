package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// HistoryLen is how many rankings the epic comment keeps, the current one included.
const HistoryLen = 5

const historyLabel = "perfbot:port-ranking-history"

var historyRE = regexp.MustCompile(`<!-- ` + regexp.QuoteMeta(historyLabel) + ` (.*?) -->`)

// historyJSON encodes the kept rankings for the hidden comment. encoding/json escapes
// <, > and &, so no `-->` can appear inside.
func historyJSON(h []HistoryEntry) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(h); err != nil {
		return "", fmt.Errorf("encoding the ranking history: %w", err)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// ParseHistory reads the rankings kept in an earlier epic comment, newest first. A body
// without the hidden history gives none; a damaged one is an error, so the caller can
// say why the history starts over.
func ParseHistory(body string) ([]HistoryEntry, error) {
	m := historyRE.FindStringSubmatch(body)
	if m == nil {
		return nil, nil
	}
	var h []HistoryEntry
	if err := json.Unmarshal([]byte(m[1]), &h); err != nil {
		return nil, fmt.Errorf("reading the ranking history kept in the epic comment: %w", err)
	}
	return h, nil
}

// MergeHistory puts cur in front of the earlier rankings, replacing an entry of the
// same profile (a rerun), and keeps HistoryLen entries. It also returns the ranking
// cur is compared with: the newest earlier entry of another profile.
func MergeHistory(earlier []HistoryEntry, cur HistoryEntry) (kept []HistoryEntry, previous *HistoryEntry) {
	kept = []HistoryEntry{cur}
	for _, e := range earlier {
		if e.Key == cur.Key {
			continue
		}
		if previous == nil {
			p := e
			previous = &p
		}
		if len(kept) < HistoryLen {
			kept = append(kept, e)
		}
	}
	return kept, previous
}

// Changes says, as Markdown list items, how the order moved from prev to cur: the new
// order, each unit that moved with its old and new place, and units that appeared or
// left. No change gives nil.
func Changes(prev, cur []string) []string {
	if slices.Equal(prev, cur) {
		return nil
	}
	var out []string
	out = append(out, fmt.Sprintf("Order: %s (was %s).", issueList(cur), issueList(prev)))
	for i, id := range cur {
		j := slices.Index(prev, id)
		switch {
		case j < 0:
			out = append(out, fmt.Sprintf("#%s is new in the ranking, at place %d.", Text(id), i+1))
		case j < i:
			out = append(out, fmt.Sprintf("#%s moved down from place %d to %d.", Text(id), j+1, i+1))
		case j > i:
			out = append(out, fmt.Sprintf("#%s moved up from place %d to %d.", Text(id), j+1, i+1))
		}
	}
	for _, id := range prev {
		if !slices.Contains(cur, id) {
			out = append(out, fmt.Sprintf("#%s is no longer ranked.", Text(id)))
		}
	}
	return out
}
