package command

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/config"
)

const testConfig = `version: 1
epic: 7
models:
  llama: {dir: models/mlx/Meta-Llama-3.1-8B-Instruct-4bit, model_type: llama, weights_gib: 4.5}
  qwen3: {dir: models/mlx/Qwen3-30B-A3B-4bit, model_type: qwen3_moe, weights_gib: 16.0}
  gemma-3_1b: {dir: models/mlx/gemma-3-1b, model_type: gemma3, weights_gib: 1.0}
default_models: [llama]
sampling: [greedy, t0.7-p0.95]
limits: {max_models: 2}
`

func testCfg(t testing.TB) config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(testConfig), config.DefaultPath)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		body  string
		want  []string
		total int
	}{
		{"plain", "/profile rocm", []string{"/profile rocm"}, 1},
		{"after text, CRLF", "hi\r\n/bench rocm  \r\nbye", []string{"/bench rocm"}, 1},
		{"three spaces in", "   /perfbot help", []string{"/perfbot help"}, 1},
		{"four spaces is code", "text\n\n    /profile rocm", nil, 0},
		{"tab is code", "\t/profile rocm", nil, 0},
		{"space then tab is code", "  \t/profile rocm", nil, 0},
		{"quote", "> /profile rocm", nil, 0},
		{"indented quote", "  > /profile rocm", nil, 0},
		{"lazy quote continuation", "> quoted\n/profile rocm", nil, 0},
		{"after a quote and a blank line", "> quoted\n\n/profile rocm", []string{"/profile rocm"}, 1},
		{"backtick fence", "```\n/profile rocm\n```\n", nil, 0},
		{"fence with info", "```sh\n/profile rocm\n```", nil, 0},
		{"tilde fence", "~~~\n/profile rocm\n~~~", nil, 0},
		{"longer fence needs a longer close", "````\n```\n/profile rocm\n````\n/bench rocm", []string{"/bench rocm"}, 1},
		{"tilde does not close backtick", "```\n~~~\n/profile rocm\n```", nil, 0},
		{"unclosed fence runs to the end", "```\n/profile rocm", nil, 0},
		{"inline backticks are not a fence", "``` x ` y\n/profile rocm", []string{"/profile rocm"}, 1},
		{"fence closed with trailing spaces", "```\nx\n```  \n/profile rocm", []string{"/profile rocm"}, 1},
		{"html comment", "<!--\n/profile rocm\n-->\n", nil, 0},
		{"one-line html comment", "<!-- note -->\n/profile rocm", []string{"/profile rocm"}, 1},
		{"html comment opened mid-line", "see <!-- hidden\n/profile rocm\n-->\n", nil, 0},
		{"html comment closed mid-line then a tag", "<!--\nx\n--> <pre>\n/profile rocm\n</pre>", nil, 0},
		{"pre block", "<pre>\n/profile rocm\n</pre>", nil, 0},
		{"pre with attributes, upper case", "<PRE lang=\"sh\">\n/profile rocm\n</PRE>\n/bench rocm", []string{"/bench rocm"}, 1},
		{"pre across blank lines", "<pre>\n\n/profile rocm\n\n</pre>", nil, 0},
		{"pre closed on the command's line is still open before it", "<pre>\n/profile rocm</pre>", nil, 0},
		{"after pre closes", "<pre>\nx\n</pre>\n/profile rocm", []string{"/profile rocm"}, 1},
		{"code element lines", "<code>\n/profile rocm\n</code>", nil, 0},
		{"code element on its own line", "<code>/profile rocm</code>", nil, 0},
		{"inline code element closed", "use <code>x</code> here\n/profile rocm", []string{"/profile rocm"}, 1},
		{"unclosed code element runs on", "a <code> b\n\n/profile rocm", nil, 0},
		{"blockquote element", "<blockquote>\n\n/profile rocm\n\n</blockquote>", nil, 0},
		{"nested blockquote", "<blockquote>\n<blockquote>\nx\n</blockquote>\n/profile rocm\n</blockquote>\n/bench rocm", []string{"/bench rocm"}, 1},
		{"q, kbd, samp, tt, del", "<q>\n/profile rocm\n</q>\n<kbd>\n/bench rocm\n</kbd>\n<samp>\n/perfbot help\n</samp>\n<tt>\n/perfbot status\n</tt>\n<del>\n/perfbot cancel\n</del>", nil, 0},
		{"textarea and script", "<textarea>\n/profile rocm\n</textarea>\n<script>\n/bench rocm\n</script>", nil, 0},
		{"self-closing slash does not close pre", "<pre/>\n/profile rocm", nil, 0},
		{"tag in a code span is text", "write `<pre>` for output\n/profile rocm", []string{"/profile rocm"}, 1},
		{"tag in a double-backtick span", "``a `<pre>` b``\n/profile rocm", []string{"/profile rocm"}, 1},
		{"escaped tag is text", "\\<pre> is a tag\n/profile rocm", []string{"/profile rocm"}, 1},
		{"tag in a one-line comment is not a tag", "<!-- <pre> -->\n/profile rocm", []string{"/profile rocm"}, 1},
		{"tag in a fence is text", "```\n<pre>\n```\n/profile rocm", []string{"/profile rocm"}, 1},
		{"tag in indented code is text", "text\n\n    <pre>\n\n/profile rocm", []string{"/profile rocm"}, 1},
		{"tag in a quote stays in the quote", "> <pre>\n\n/profile rocm", []string{"/profile rocm"}, 1},
		{"a less-than sign before a name is not a tag", "if a <s b then\n/profile rocm", []string{"/profile rocm"}, 1},
		{"an opening tag alone starts a block", "<pre\nclass=x>\n/profile rocm\n</pre>", nil, 0},
		{"other tags are not hidden", "<preview>\n<b>\n/profile rocm\n</b>", []string{"/profile rocm"}, 1},
		{"fence inside a blockquote element", "<blockquote>\n\n```\n</blockquote>\n```\n\n/profile rocm\n</blockquote>", nil, 0},
		{"details is read", "<details>\n<summary>run it</summary>\n\n/profile rocm\n\n</details>", []string{"/profile rocm"}, 1},
		{"details without a blank line is read", "<details>\n/profile rocm\n</details>", []string{"/profile rocm"}, 1},
		{"pre inside details", "<details>\n<pre>\n/profile rocm\n</pre>\n</details>", nil, 0},
		{"mid-line", "please /profile rocm", nil, 0},
		{"list item", "- /profile rocm", nil, 0},
		{"prefix of a verb", "/profiles rocm\n/benchmark", nil, 0},
		{"other bots' commands", "/lgtm\n/area kubectl\n/retest", nil, 0},
		{"uppercase verb", "/Profile rocm", nil, 0},
		{"verb alone", "/perfbot", []string{"/perfbot"}, 1},
		{"two", "/profile rocm\n\n/bench rocm", []string{"/profile rocm", "/bench rocm"}, 2},
	}
	for _, c := range cases {
		got, total := Lines(c.body)
		if !slices.Equal(got, c.want) || total != c.total {
			t.Errorf("%s: Lines(%q) = %q, %d; want %q, %d", c.name, c.body, got, total, c.want, c.total)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	cases := []struct {
		body string
		want Command // Line and Text are not compared
	}{
		{"/profile rocm", Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}}},
		{"/profile rocm models=qwen3,gemma-3_1b sampling=t0.70-p1,t1.5-p0.9",
			Command{Kind: Profile, Backend: "rocm", Models: []string{"qwen3", "gemma-3_1b"}, ModelsGiven: true,
				Sampling: []string{"t0.7", "t1.5-p0.9"}, SamplingGiven: true}},
		{"/profile rocm sampling=t0", Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy"}, SamplingGiven: true}},
		{"/profile rocm sampling=t2-p1", Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"t2"}, SamplingGiven: true}},
		{"/profile rocm ref=ABCDEF0", Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}, Ref: "abcdef0", RefKind: RefSHA}},
		{"/profile rocm ref=release/1.2", Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}, Ref: "release/1.2", RefKind: RefBranch}},
		{"/profile rocm ref=" + strings.Repeat("ab", 20), Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}, Ref: strings.Repeat("ab", 20), RefKind: RefSHA}},
		// 41 hex digits cannot be a SHA; it is a valid branch name.
		{"/profile rocm ref=" + strings.Repeat("a", 41), Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}, Ref: strings.Repeat("a", 41), RefKind: RefBranch}},
		{"/profile rocm epic=12", Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}, Epic: 12}},
		{"/profile\trocm   epic=#3", Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}, Epic: 3}},
		{"/bench rocm", Command{Kind: Bench, Backend: "rocm"}},
		{"/bench rocm ref=feature", Command{Kind: Bench, Backend: "rocm", Ref: "feature", RefKind: RefBranch}},
		{"/perfbot help", Command{Kind: Help}},
		{"/perfbot status", Command{Kind: Status}},
		{"/perfbot status r-12.a_b", Command{Kind: Status, ID: "r-12.a_b"}},
		{"/perfbot cancel", Command{Kind: Cancel}},
		{"/perfbot cancel 42", Command{Kind: Cancel, ID: "42"}},
	}
	for _, c := range cases {
		got, found, err := Parse("thanks!\n"+c.body+"\n", cfg)
		if err != nil || !found {
			t.Errorf("Parse(%q): found %v, error %v", c.body, found, err)
			continue
		}
		if got.Line != 2 || got.Text != strings.TrimSpace(c.body) {
			t.Errorf("Parse(%q): line %d text %q", c.body, got.Line, got.Text)
		}
		got.Line, got.Text = 0, ""
		if !equal(got, c.want) {
			t.Errorf("Parse(%q) =\n %+v, want\n %+v", c.body, got, c.want)
		}
	}
}

func equal(a, b Command) bool {
	return a.Kind == b.Kind && a.Backend == b.Backend && slices.Equal(a.Models, b.Models) && a.ModelsGiven == b.ModelsGiven &&
		slices.Equal(a.Sampling, b.Sampling) && a.SamplingGiven == b.SamplingGiven && a.Ref == b.Ref &&
		a.RefKind == b.RefKind && a.Epic == b.Epic && a.ID == b.ID
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	cases := []struct {
		body    string
		problem string
		valid   []string
	}{
		{"/profile", "/profile needs one of rocm", []string{"rocm"}},
		{"/profile cuda", `unknown backend "cuda"`, []string{"rocm"}},
		{"/bench", "/bench needs one of rocm", []string{"rocm"}},
		{"/perfbot", "/perfbot needs one of help, status, cancel, accept", []string{"help", "status", "cancel", "accept"}},
		{"/perfbot restart", `unknown subcommand "restart"`, []string{"help", "status", "cancel", "accept"}},
		{"/profile rocm please", `unknown argument "please"`, []string{"models=NAME,...", "sampling=TAG,...", "ref=SHA|BRANCH", "epic=N"}},
		{"/profile rocm model=llama", `unknown argument "model="`, []string{"models=NAME,...", "sampling=TAG,...", "ref=SHA|BRANCH", "epic=N"}},
		{"/bench rocm models=llama", `unknown argument "models="`, []string{"ref=SHA|BRANCH"}},
		{"/perfbot help me", "takes no arguments", nil},
		{"/profile rocm models=mistral", `unknown model "mistral"`, []string{"llama", "qwen3", "gemma-3_1b"}},
		{"/profile rocm models=llama,llama", `model "llama" is named twice`, []string{"llama", "qwen3", "gemma-3_1b"}},
		{"/profile rocm models=llama,qwen3,gemma-3_1b", "one request runs at most 2", []string{"llama", "qwen3", "gemma-3_1b"}},
		{"/profile rocm models=", "empty item", []string{"llama", "qwen3", "gemma-3_1b"}},
		{"/profile rocm models=llama,,qwen3", "empty item", []string{"llama", "qwen3", "gemma-3_1b"}},
		{"/profile rocm models=llama models=qwen3", "models=NAME,... is given twice", nil},
		{"/profile rocm sampling=hot", "want greedy, t<T> or t<T>-p<P>", samplingValid},
		{"/profile rocm sampling=t2.01", "temperature must be in [0, 2]", samplingValid},
		{"/profile rocm sampling=t0.7-p0", "top-p must be in (0, 1]", samplingValid},
		{"/profile rocm sampling=t0.7-p1.01", "top-p must be in (0, 1]", samplingValid},
		{"/profile rocm sampling=t0-p0.5", "top-p needs a temperature above 0", samplingValid},
		{"/profile rocm sampling=greedy,t0", "same setting as an earlier one (greedy)", samplingValid},
		{"/profile rocm sampling=" + strings.Repeat("t1,", 8) + "t1", "at most 8", samplingValid},
		{"/profile rocm ref=abc", "too short for a SHA", refValid},
		{"/profile rocm ref=a..b", "not a valid branch name", refValid},
		{"/profile rocm ref=-rf", "not a valid branch name", refValid},
		{"/profile rocm ref=refs/heads/x", "without refs/", refValid},
		{"/profile rocm ref=" + strings.Repeat("x", 256), "at most 255", refValid},
		{"/profile rocm epic=0", "not an issue number", []string{"a positive issue number"}},
		{"/profile rocm epic=-3", "not an issue number", []string{"a positive issue number"}},
		{"/profile rocm epic=012", "not an issue number", []string{"a positive issue number"}},
		{"/profile rocm epic=99999999999", "not an issue number", []string{"a positive issue number"}},
		{"/perfbot cancel ../x", `"../x" is not a request id`, []string{"letters, digits, -, _ and ., at most 64"}},
		{"/perfbot cancel " + strings.Repeat("a", 65), "is not a request id", []string{"letters, digits, -, _ and ., at most 64"}},
		{"/perfbot cancel 1 2", "ID is given twice", nil},
		{"/profile rocm\n/bench rocm", "one command per comment: this comment has 2 (lines 1 and 2)", nil},
		{"/profile rocm\n/bench rocm\n/perfbot help", "has 3 (lines 1 and 2, and more)", nil},
		{"/profile rocm " + strings.Repeat("x", MaxLineBytes), "perfbot reads at most 2048", nil},
	}
	for _, c := range cases {
		_, found, err := Parse(c.body, cfg)
		var ce *Error
		if !found || !errors.As(err, &ce) {
			t.Errorf("Parse(%.60q): found %v, error %v; want an *Error", c.body, found, err)
			continue
		}
		if !strings.Contains(ce.Problem, c.problem) {
			t.Errorf("Parse(%.60q): problem %q, want %q", c.body, ce.Problem, c.problem)
		}
		if !slices.Equal(ce.Valid, c.valid) {
			t.Errorf("Parse(%.60q): valid %q, want %q", c.body, ce.Valid, c.valid)
		}
		if len(ce.Usage) == 0 || ce.Line == 0 || ce.Text == "" {
			t.Errorf("Parse(%.60q): error without usage, line or text: %+v", c.body, ce)
		}
	}
}

func TestParseBounds(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	long := strings.Repeat("lorem ipsum\n", MaxBodyBytes/12+1)
	if _, found, err := Parse(long, cfg); found || err != nil {
		t.Errorf("a long comment without a command: found %v, error %v", found, err)
	}
	_, found, err := Parse("/profile rocm\n"+long, cfg)
	if !found || err == nil || !strings.Contains(err.Error(), "longer than 262144 bytes") {
		t.Errorf("a long comment with a command: found %v, error %v", found, err)
	}
	// A command past the bound is not read at all.
	if _, found, _ := Parse(long+"/profile rocm", cfg); found {
		t.Error("read a command past MaxBodyBytes")
	}
}

func TestReplyEscapes(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	_, _, err := Parse("/profile rocm models=<img/src=x>@everyone,[x](javascript:alert(1))", cfg)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v", err)
	}
	reply := ce.Reply()
	unescaped := regexp.MustCompile(`(^|[^\\])<img|@everyone|(^|[^\\])\]\(javascript`)
	for _, line := range strings.Split(reply, "\n") {
		// Only inside the code span of the first line may the raw text appear.
		if unescaped.MatchString(line) && !strings.HasPrefix(line, "perfbot could not run the command") {
			t.Errorf("reply line %q holds markup or a mention unescaped", line)
		}
	}
	if !strings.Contains(reply, "Valid: `llama`, `qwen3`, `gemma-3_1b`") || !strings.Contains(reply, "- `/profile rocm [models=NAME,...]") {
		t.Errorf("reply lacks the valid models or the usage:\n%s", reply)
	}
}

// TestHelpIsTheTable checks the help against the table it is generated from: every row's
// usage and arguments appear, nothing else does, and every example it shows parses as
// the command it documents. A help text edited by hand, or a table row the parser does
// not accept, fails here.
func TestHelpIsTheTable(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	help := HelpText(cfg)
	usage := regexp.MustCompile("(?m)^- `(/[^`]*)`: ")
	var shown []string
	for _, m := range usage.FindAllStringSubmatch(help, -1) {
		shown = append(shown, m[1])
	}
	var table []string
	for _, s := range Specs() {
		table = append(table, s.Usage())
		for _, a := range s.Args {
			if !strings.Contains(help, "  - `"+a.Synopsis()+"`: ") {
				t.Errorf("help lacks argument %s of %s", a.Synopsis(), s.Usage())
			}
		}
	}
	if !slices.Equal(shown, table) {
		t.Errorf("help shows commands %q, the table has %q", shown, table)
	}
	examples := regexp.MustCompile("(?m)^- `(/[^`]*)`: .*Example: `([^`]*)`")
	seen := map[Kind]bool{}
	for _, m := range examples.FindAllStringSubmatch(help, -1) {
		cmd, found, err := Parse(m[2], cfg)
		if !found || err != nil {
			t.Errorf("help example %q of %s: found %v, error %v", m[2], m[1], found, err)
			continue
		}
		seen[cmd.Kind] = true
		if m[1] != specOf(cmd.Kind, cmd.Compare).Usage() {
			t.Errorf("help example %q parses as %s, but is listed under %s", m[2], cmd.Kind, m[1])
		}
	}
	// Every row parses in its bare form (refused, naming them, when it has required
	// arguments) and, with all its arguments, as its example.
	for _, s := range Specs() {
		lines := []string{strings.Join(s.Words, " "), Example(s, cfg)}
		var required []string
		for _, a := range s.Args {
			if a.Required {
				required = append(required, a.Synopsis())
			}
		}
		if len(required) > 0 {
			_, found, err := Parse(lines[0], cfg)
			if want := lines[0] + " needs " + strings.Join(required, " and "); !found || err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: found %v, error %v; want %q", lines[0], found, err, want)
			}
			lines = lines[1:]
		}
		for _, line := range lines {
			cmd, found, err := Parse(line, cfg)
			if !found || err != nil || cmd.Kind != s.Kind || cmd.Compare != s.Compare {
				t.Errorf("%q: kind %s compare %v, found %v, error %v; want %s compare %v", line, cmd.Kind, cmd.Compare, found, err, s.Kind, s.Compare)
			}
		}
		if len(s.Args) > 0 && !seen[s.Kind] {
			t.Errorf("help shows no example of %s", s.Usage())
		}
	}
	if !strings.Contains(help, "`write` permission on this repository") {
		t.Errorf("help does not state the minimum permission:\n%s", help)
	}
}

func specOf(k Kind, compare bool) Spec {
	for _, s := range Specs() {
		if s.Kind == k && s.Compare == compare {
			return s
		}
	}
	return Spec{}
}

func TestVerbs(t *testing.T) {
	t.Parallel()
	if got := Verbs(); !slices.Equal(got, []string{"/profile", "/bench", "/perfbot"}) {
		t.Errorf("Verbs() = %q", got)
	}
}
