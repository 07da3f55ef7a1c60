package command

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/config"
)

// Kind names a command.
type Kind string

// The commands. Their grammar is the table in Specs.
const (
	Profile Kind = "profile" // /profile rocm [models=...] [sampling=...] [ref=...] [epic=N]; /profile rocm compare ...
	Bench   Kind = "bench"   // /bench rocm [ref=...]; /bench rocm compare ...
	Bisect  Kind = "bisect"  // /bench rocm bisect good=SHA bad=SHA [models=NAME]
	Help    Kind = "help"    // /perfbot help
	Status  Kind = "status"  // /perfbot status [ID]
	Cancel  Kind = "cancel"  // /perfbot cancel [ID]
	Accept  Kind = "accept"  // /perfbot accept
)

// Bounds on what one comment may hold (docs/commands.md). GitHub itself caps a comment
// at 65,536 characters; MaxBodyBytes is that many four-byte characters.
const (
	MaxBodyBytes = 4 * 65536
	MaxLineBytes = 2048
	// MaxSampling bounds the sampling settings of one request; the models are bounded by
	// the config's limits.max_models.
	MaxSampling = 8
	// MaxIDLen bounds the request id of status and cancel.
	MaxIDLen = 64
)

// RefKind says what ref= named.
type RefKind int

// The kinds of ref.
const (
	RefNone   RefKind = iota
	RefSHA            // 7 to 40 hex digits, lower-cased
	RefBranch         // a branch name of the repository itself
)

// FullSHALen is the length of a full commit SHA in hex.
const FullSHALen = 40

// Command is one parsed command with typed, checked values.
type Command struct {
	Kind Kind
	// Backend is "rocm" for Profile and Bench, "" otherwise.
	Backend string
	// Models are the models to run (Profile): the ones named with models=, else the
	// config's default_models. Each is a configured model, once.
	Models      []string
	ModelsGiven bool
	// Sampling are canonical run tags (Profile): the ones named with sampling=, else the
	// config's sampling.
	Sampling      []string
	SamplingGiven bool
	// Ref is what ref= named: a lower-case SHA of 7-40 hex digits or a branch name.
	// Its existence is not checked here (the gate asks GitHub).
	Ref     string
	RefKind RefKind
	// Epic is the issue epic= named; 0 when not given.
	Epic int
	// Compare is true for the compare forms (/profile rocm compare, /bench rocm
	// compare): Ref names B, the changed commit, and Base names A, the commit it is
	// compared with. Kind stays Profile or Bench.
	Compare bool
	// Base is what base= named, in Ref's forms; "" when not given (on a pull request A
	// is then the merge base with its target branch).
	Base     string
	BaseKind RefKind
	// Repeats is the most repeats per side of a compare (the cap of its adaptive
	// plan): repeats= of /bench rocm compare, else the config's limits.max_repeats. 0
	// when not a compare.
	Repeats      int
	RepeatsGiven bool
	// Good and Bad are the range of a bisection (Bisect): the last known good commit
	// and the first known bad one, each a lower-case SHA of 7 to 40 hex digits as
	// good= and bad= named it (the gate resolves and checks them). Its one model is
	// Models[0].
	Good, Bad string
	// ID is the request id status or cancel named; "" when not given.
	ID string
	// Line is the command's 1-based line in the comment; Text the line as written.
	Line int
	Text string
}

// FullSHA reports whether Ref is a full 40-digit SHA.
func (c Command) FullSHA() bool { return c.RefKind == RefSHA && len(c.Ref) == FullSHALen }

// FullBaseSHA reports whether Base is a full 40-digit SHA.
func (c Command) FullBaseSHA() bool { return c.BaseKind == RefSHA && len(c.Base) == FullSHALen }

// Spec is one row of the grammar table: the words that start the command, the
// arguments it takes, and what it does. Parsing, the help text and the error replies
// all come from these rows.
type Spec struct {
	Kind Kind
	// Compare marks the compare forms, whose third word is "compare".
	Compare bool
	// Words are the fixed words: the verb, then the backend or the subcommand.
	Words []string
	Args  []Arg
	// Summary says what the command does, for the help text.
	Summary string
}

// Usage is the command's one-line synopsis, e.g. `/perfbot cancel [ID]`: the
// optional arguments in brackets.
func (s Spec) Usage() string {
	parts := append([]string(nil), s.Words...)
	for _, a := range s.Args {
		if a.Required {
			parts = append(parts, a.Synopsis())
		} else {
			parts = append(parts, "["+a.Synopsis()+"]")
		}
	}
	return strings.Join(parts, " ")
}

// Arg is one argument of a command: key=value, or a bare word when Key is "".
type Arg struct {
	Key string
	// Value is the placeholder of the synopsis, e.g. NAME,...
	Value string
	// Required arguments must be given; the others have defaults.
	Required bool
	// Help says what it means and what is valid, for the help text.
	Help func(cfg config.Config) string
	// Example is a valid value under cfg, for the help text (and the test that parses
	// every example the help shows).
	Example func(cfg config.Config) string
	parse   func(cmd *Command, v string, cfg config.Config) *Error
}

// Synopsis is the argument as the usage line shows it: models=NAME,... or ID.
func (a Arg) Synopsis() string {
	if a.Key == "" {
		return a.Value
	}
	return a.Key + "=" + a.Value
}

// Backends are the backends /profile and /bench run on.
var Backends = []string{"rocm"}

var (
	argModels = Arg{
		Key: "models", Value: "NAME,...",
		Help: func(cfg config.Config) string {
			return fmt.Sprintf("the models to run, at most %d, from %s; default %s",
				maxModels(cfg), codeList(modelNames(cfg)), codeList(cfg.DefaultModels))
		},
		Example: func(cfg config.Config) string {
			names := modelNames(cfg)
			if len(names) > 2 {
				names = names[:2]
			}
			if len(names) > maxModels(cfg) {
				names = names[:maxModels(cfg)]
			}
			return strings.Join(names, ",")
		},
		parse: parseModels,
	}
	argSampling = Arg{
		Key: "sampling", Value: "TAG,...",
		Help: func(cfg config.Config) string {
			return fmt.Sprintf("sampling settings as run tags, at most %d: `greedy`, `t<T>` or `t<T>-p<P>` "+
				"with temperature T in [0, 2] and top-p P in (0, 1]; default %s", MaxSampling, codeList(cfg.SamplingTags))
		},
		Example: func(config.Config) string { return "greedy,t0.7-p0.95" },
		parse:   parseSampling,
	}
	argRef = Arg{
		Key: "ref", Value: "SHA|BRANCH",
		Help: func(config.Config) string {
			return "the commit to run: a SHA of 7 to 40 hex digits or a branch of this repository; " +
				"default the pull request's head, or the default branch's head on an issue"
		},
		Example: func(config.Config) string { return "main" },
		parse:   parseRef,
	}
	argBase = Arg{
		Key: "base", Value: "SHA|BRANCH",
		Help: func(config.Config) string {
			return "A, the commit compared with: a SHA of 7 to 40 hex digits or a branch of this repository; " +
				"default on a pull request the merge base of its head with its target branch; on an issue, name it"
		},
		Example: func(config.Config) string { return "9fceb02" },
		parse:   parseBase,
	}
	argRefB = Arg{
		Key: "ref", Value: "SHA|BRANCH",
		Help: func(config.Config) string {
			return "B, the changed commit: a SHA of 7 to 40 hex digits or a branch of this repository; " +
				"default the pull request's head; on an issue, name it"
		},
		Example: func(config.Config) string { return "main" },
		parse:   parseRef,
	}
	argRepeats = Arg{
		Key: "repeats", Value: "N",
		Help: func(cfg config.Config) string {
			return fmt.Sprintf("the most runs per side, %d to %d: each side starts with %d and gets more, up to N, while the verdict is open; default %d (limits.max_repeats)",
				MinRepeats, maxRepeats(cfg), MinRepeats, maxRepeats(cfg))
		},
		Example: func(cfg config.Config) string { return strconv.Itoa(maxRepeats(cfg)) },
		parse:   parseRepeats,
	}
	argGood = Arg{
		Key: "good", Value: "SHA", Required: true,
		Help: func(config.Config) string {
			return "the last known good commit: a SHA of 7 to 40 hex digits on the default branch, an ancestor of bad"
		},
		Example: func(config.Config) string { return "9fceb02" },
		parse:   parseGood,
	}
	argBad = Arg{
		Key: "bad", Value: "SHA", Required: true,
		Help: func(cfg config.Config) string {
			return fmt.Sprintf("the first known bad commit: a SHA of 7 to 40 hex digits on the default branch; "+
				"the range good..bad holds at most %d commits, both included (limits.max_bisect_commits)", maxBisectCommits(cfg))
		},
		Example: func(config.Config) string { return "e83c516" },
		parse:   parseBad,
	}
	argModel = Arg{
		Key: "models", Value: "NAME",
		Help: func(cfg config.Config) string {
			return fmt.Sprintf("the one model to measure, from %s; default %s (the first of default_models)",
				codeList(modelNames(cfg)), codeList(firstModel(cfg)))
		},
		Example: func(cfg config.Config) string { return strings.Join(firstModel(cfg), "") },
		parse:   parseOneModel,
	}
	argEpic = Arg{
		Key: "epic", Value: "N",
		Help: func(cfg config.Config) string {
			d := "none"
			if cfg.Epic > 0 {
				d = "#" + strconv.Itoa(cfg.Epic)
			}
			return "the issue number that gets the ranking comment; default " + d
		},
		Example: func(config.Config) string { return "12" },
		parse:   parseEpic,
	}
	argID = Arg{
		Key: "", Value: "ID",
		Help: func(config.Config) string {
			return fmt.Sprintf("a request id as the status comment shows it (letters, digits, `-`, `_`, `.`; at most %d)", MaxIDLen)
		},
		Example: func(config.Config) string { return "42" },
		parse:   parseID,
	}
)

// Specs is the grammar: one row per command, in the order the help lists them.
func Specs() []Spec {
	return []Spec{
		{Kind: Profile, Words: []string{"/profile", "rocm"}, Args: []Arg{argModels, argSampling, argRef, argEpic},
			Summary: "profile the decode of the models on the ROCm GPU host and open a pull request with the ranked results"},
		{Kind: Profile, Compare: true, Words: []string{"/profile", "rocm", "compare"}, Args: []Arg{argBase, argRefB, argModels, argSampling},
			Summary: "profile the decode of commit A and commit B in one session on the ROCm GPU host and compare them kernel by kernel"},
		{Kind: Bench, Words: []string{"/bench", "rocm"}, Args: []Arg{argRef},
			Summary: "run the throughput baseline on the ROCm GPU host"},
		{Kind: Bench, Compare: true, Words: []string{"/bench", "rocm", "compare"}, Args: []Arg{argBase, argRefB, argModels, argRepeats},
			Summary: "measure the throughput of commit A and commit B interleaved in one session on the ROCm GPU host and say, per model, whether B is faster, slower or the same"},
		{Kind: Bisect, Words: []string{"/bench", "rocm", "bisect"}, Args: []Arg{argGood, argBad, argModel},
			Summary: "find the first bad commit of the range good..bad of the default branch for one model on the ROCm GPU host, measuring the commits between with repeats added until a test decides each side, within limits.max_bisect_runs runs"},
		{Kind: Help, Words: []string{"/perfbot", "help"},
			Summary: "show this help"},
		{Kind: Status, Words: []string{"/perfbot", "status"}, Args: []Arg{argID},
			Summary: "list the queued and running requests, or show one"},
		{Kind: Cancel, Words: []string{"/perfbot", "cancel"}, Args: []Arg{argID},
			Summary: "drop a queued request or cancel its run (the requester, or `maintain`/`admin`); without ID, your request on this issue or pull request"},
		{Kind: Accept, Words: []string{"/perfbot", "accept"},
			Summary: "on a nightly regression issue: accept the new level as the normal one (`maintain`/`admin`); the next nightly closes the issue"},
	}
}

// Verbs are the first words of the commands, once each: /profile, /bench, /perfbot.
func Verbs() []string {
	var vs []string
	seen := map[string]bool{}
	for _, s := range Specs() {
		if !seen[s.Words[0]] {
			seen[s.Words[0]] = true
			vs = append(vs, s.Words[0])
		}
	}
	return vs
}

func maxModels(cfg config.Config) int {
	if cfg.Limits.MaxModels > 0 {
		return cfg.Limits.MaxModels
	}
	return config.Default().Limits.MaxModels
}

// MinRepeats is the fewest repeats per side of a compare: each side starts with that
// many (runner/abrun's DefaultStart), so the cap repeats= names cannot be lower.
const MinRepeats = config.MinRepeats

func maxRepeats(cfg config.Config) int {
	if cfg.Limits.MaxRepeats > 0 {
		return cfg.Limits.MaxRepeats
	}
	return config.Default().Limits.MaxRepeats
}

func maxBisectCommits(cfg config.Config) int {
	if cfg.Limits.MaxBisectCommits > 0 {
		return cfg.Limits.MaxBisectCommits
	}
	return config.Default().Limits.MaxBisectCommits
}

// firstModel is the model a bisection measures without models=: the first of
// default_models, else the first configured model; none when there is no model.
func firstModel(cfg config.Config) []string {
	switch {
	case len(cfg.DefaultModels) > 0:
		return cfg.DefaultModels[:1]
	case len(cfg.Models) > 0:
		return []string{cfg.Models[0].Name}
	}
	return nil
}

func modelNames(cfg config.Config) []string {
	names := make([]string, len(cfg.Models))
	for i, m := range cfg.Models {
		names[i] = m.Name
	}
	return names
}

// codeList renders names as inline code, comma separated; "none" when empty.
func codeList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = code(n)
	}
	return strings.Join(parts, ", ")
}
