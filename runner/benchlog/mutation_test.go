package benchlog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// minimalLog is a complete bench log with the given phase marks (boottime values; the
// monotonic clock is na) and results block lines.
func minimalLog(marks [4]string, results string) string {
	var b strings.Builder
	b.WriteString("[mlx-rocm] bound HIP device 0: gfx1151 (AMD Radeon 8060S Graphics) cus=20 warp=32 lds=64KB\n")
	for i, name := range phaseNames {
		b.WriteString("[phase] " + name + " boottime_ns=" + marks[i] + " monotonic_ns=na\n")
	}
	b.WriteString("[Profile Results]\n" + results)
	return b.String()
}

const fullResults = "  Prompt tokens:    512\n  Generated tokens: 128\n  Prefill:  1200.5 ms (426.5 tok/s)\n" +
	"  Decode:   3400.25 ms (37.6 tok/s)\n  MLX peak memory: 5.25 GB\n"

// Values exactly on the edge of what is valid parse, the whole Log compared; one step
// past the edge is an error naming the line.
func TestParseEdges(t *testing.T) {
	t.Parallel()
	want := func(marks Marks, prompt, generated int) *Log {
		return &Log{Boottime: marks, PromptTokens: prompt, GeneratedTokens: generated,
			PrefillMs: 1200.5, PrefillTokS: 426.5, DecodeMs: 3400.25, DecodeTokS: 37.6, PeakMemoryGB: 5.25,
			Device: "gfx1151 (AMD Radeon 8060S Graphics)", GfxTarget: "gfx1151", HasResults: true}
	}
	cases := []struct {
		name string
		log  string
		want *Log
		err  string
	}{
		{"marks from zero", minimalLog([4]string{"0", "0", "5", "9"}, fullResults), want(Marks{0, 0, 5, 9, true}, 512, 128), ""},
		{"all marks equal", minimalLog([4]string{"7", "7", "7", "7"}, fullResults), want(Marks{7, 7, 7, 7, true}, 512, 128), ""},
		{"a negative mark", minimalLog([4]string{"-1", "0", "5", "9"}, fullResults), nil,
			`x.log:2: phase mark warmup_start: boottime_ns="-1" is not a nanosecond count or na`},
		{"one mark a nanosecond early", minimalLog([4]string{"1", "2", "2", "1"}, fullResults), nil,
			"x.log:5: phase mark measured_end (boottime_ns=1) comes before decode_start (2); the marks are out of order"},
		{"zero tokens", minimalLog([4]string{"1", "2", "3", "4"}, strings.Replace(strings.Replace(fullResults, "512", "0", 1), "128", "0", 1)),
			want(Marks{1, 2, 3, 4, true}, 0, 0), ""},
		{"negative tokens", minimalLog([4]string{"1", "2", "3", "4"}, strings.Replace(fullResults, "128", "-1", 1)), nil,
			`x.log:8: Generated tokens: "-1" is not a token count`},
		{"unknown result lines, repeated", minimalLog([4]string{"1", "2", "3", "4"}, "  Note: a\n"+fullResults+"  Note: b\n  Note: a\n"),
			want(Marks{1, 2, 3, 4, true}, 512, 128), ""},
	}
	for _, c := range cases {
		got, err := Parse(strings.NewReader(c.log), "x.log")
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: log (-want +got):\n%s", c.name, diff)
		}
	}
}

// A prefix is replaced only as a whole path component: any letter, digit or path
// punctuation right before or after it makes it part of another name.
func TestCleanComponentEdges(t *testing.T) {
	t.Parallel()
	var in, want strings.Builder
	for _, c := range "azAZ09/._-~" {
		in.WriteString("x /w" + string(c) + " " + string(c) + "/w\n")
		if c == '/' {
			want.WriteString("x <...>/ //w\n")
			continue
		}
		want.WriteString("x /w" + string(c) + " " + string(c) + "/w\n")
	}
	for _, c := range "`{@[:=' \"," {
		in.WriteString("x /w" + string(c) + string(c) + "/w\n")
		want.WriteString("x <...>" + string(c) + string(c) + "<...>\n")
	}
	if diff := cmp.Diff(want.String(), string(Clean([]byte(in.String()), []string{"/w"}))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A line of exactly maxLineBytes, its newline included, is read; one byte more is refused.
func TestParseLineLengthEdge(t *testing.T) {
	t.Parallel()
	log := minimalLog([4]string{"1", "2", "3", "4"}, fullResults)
	at := strings.Repeat("x", maxLineBytes-1) + "\n"
	if _, err := Parse(strings.NewReader(at+log), "bench.log"); err != nil {
		t.Errorf("a line of %d bytes: %v", maxLineBytes, err)
	}
	over := strings.Repeat("x", maxLineBytes) + "\n"
	want := "bench.log:1: a line longer than 16 MiB: is this the bench's log (and not a binary or a corrupted file)?"
	if _, err := Parse(strings.NewReader(over+log), "bench.log"); err == nil || err.Error() != want {
		t.Errorf("a line of %d bytes: %v, want %q", maxLineBytes+1, err, want)
	}
}
