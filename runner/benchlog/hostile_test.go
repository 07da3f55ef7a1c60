package benchlog

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/streamtest"
)

// The metrics need the phase marks, `Generated tokens:` and `Decode:`. A results block
// without the other lines is read, with a warning naming each missing line.
func TestParseOptionalResultLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		drop    []string
		want    func(Log) Log
		warning []string
	}{
		{"no prefill", []string{"  Prefill:"}, func(l Log) Log { l.PrefillMs, l.PrefillTokS = 0, 0; return l },
			[]string{`the results block (line 11) has no "Prefill:" line: the prefill tok/s figures are 0`}},
		{"no peak memory", []string{"  MLX peak memory:"}, func(l Log) Log { l.PeakMemoryGB = 0; return l },
			[]string{`the results block (line 11) has no "MLX peak memory:" line: the peak memory is unknown`}},
		{"neither, nor the prompt", []string{"  Prefill:", "  MLX peak memory:", "  Prompt tokens:"},
			func(l Log) Log { l.PrefillMs, l.PrefillTokS, l.PeakMemoryGB, l.PromptTokens = 0, 0, 0, 0; return l },
			[]string{
				`the results block (line 11) has no "Prompt tokens:" line: prompt_tokens is 0`,
				`the results block (line 11) has no "Prefill:" line: the prefill tok/s figures are 0`,
				`the results block (line 11) has no "MLX peak memory:" line: the peak memory is unknown`,
			}},
	}
	orig, err := ParseFile(fixture(t, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_bench.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		path := variant(t, func(s string) string {
			var kept []string
			for _, l := range lines(s) {
				drop := false
				for _, d := range c.drop {
					drop = drop || strings.HasPrefix(l, d)
				}
				if !drop {
					kept = append(kept, l)
				}
			}
			return strings.Join(kept, "")
		})
		got, err := ParseFile(path)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		want := c.want(*orig)
		want.Warnings = c.warning
		if d := cmp.Diff(want, *got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

// A log without newlines is not buffered whole: the parse stops at the first line
// longer than any log line, having read little more than it.
func TestParseBoundsLineLength(t *testing.T) {
	t.Parallel()
	r := &streamtest.Counting{R: io.MultiReader(strings.NewReader("[phase] warmup_start boottime_ns=1\n"), io.LimitReader(streamtest.Zeros{}, 10<<30))}
	_, err := Parse(r, "bench.log")
	want := "bench.log:2: a line longer than 16 MiB: is this the bench's log (and not a binary or a corrupted file)?"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if r.N > 20<<20 {
		t.Errorf("read %d MiB before giving up", r.N>>20)
	}
}

// An endless log ends the parse only by cancellation, and promptly.
func TestParseFileStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ParseFileContext(ctx, fixture(t, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_bench.log")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before the read: %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Parse(infile.Reader(ctx, &streamtest.Repeat{Text: "loading shard 3 of 7\n"}), "bench.log")
		done <- err
	}()
	time.AfterFunc(50*time.Millisecond, cancel)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the parse did not stop after the cancel")
	}
}
