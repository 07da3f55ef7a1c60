package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/internal/yamlstrict"
	"github.com/lablup/perfbot/runner/results"
)

// The raw* types mirror the file. Their scalars start out holding Default()'s values,
// so a key left out keeps its default; lists and maps start nil (an empty key decodes to
// nil too) and build gives nil its default, so a list or map given replaces it whole.
type rawFile struct {
	Version       wholeNumber         `yaml:"version"`
	Epic          wholeNumber         `yaml:"epic"`
	Trigger       rawTrigger          `yaml:"trigger"`
	Models        map[string]rawModel `yaml:"models"`
	DefaultModels []string            `yaml:"default_models"`
	Sampling      []string            `yaml:"sampling"`
	Shape         rawShape            `yaml:"shape"`
	Runners       map[string][]string `yaml:"runners"`
	Guard         rawGuard            `yaml:"guard"`
	Branches      rawBranches         `yaml:"branches"`
	Results       rawResults          `yaml:"results"`
	Rules         string              `yaml:"rules"`
	Verify        [][]string          `yaml:"verify"`
	Limits        rawLimits           `yaml:"limits"`
	Trend         rawTrend            `yaml:"trend"`
	Compare       rawCompare          `yaml:"compare"`
	Nightly       rawNightly          `yaml:"nightly"`
}

type rawNightly struct {
	CreepPct   realNumber  `yaml:"creep_pct"`
	BisectRuns wholeNumber `yaml:"bisect_runs"`
}

type rawTrend struct {
	Publish     string `yaml:"publish"`
	Path        string `yaml:"path"`
	PagesBranch string `yaml:"pages_branch"`
}

type rawTrigger struct {
	MinPermission string `yaml:"min_permission"`
}

type rawModel struct {
	Dir        string     `yaml:"dir"`
	ModelType  string     `yaml:"model_type"`
	Config     string     `yaml:"config"`
	WeightsGiB realNumber `yaml:"weights_gib"`
}

type rawShape struct {
	Prompt   wholeNumber `yaml:"prompt"`
	Generate wholeNumber `yaml:"generate"`
	Warmup   wholeNumber `yaml:"warmup"`
}

type rawGuard struct {
	IdleSecs         wholeNumber `yaml:"idle_secs"`
	SampleHz         wholeNumber `yaml:"sample_hz"`
	MaxAttempts      wholeNumber `yaml:"max_attempts"`
	MaxWaitSecs      wholeNumber `yaml:"max_wait_secs"`
	MaxForeignCPUPct realNumber  `yaml:"max_foreign_cpu_pct"`
	Lock             string      `yaml:"lock"`
}

type rawBranches struct {
	Profile     string     `yaml:"profile"`
	Baseline    string     `yaml:"baseline"`
	DeleteStale strictBool `yaml:"delete_stale"`
}

type rawResults struct {
	Profiles   string `yaml:"profiles"`
	Reports    string `yaml:"reports"`
	Benchmarks string `yaml:"benchmarks"`
}

type rawLimits struct {
	MaxModels        wholeNumber `yaml:"max_models"`
	RunTimeoutMins   wholeNumber `yaml:"run_timeout_mins"`
	CommentMaxBytes  wholeNumber `yaml:"comment_max_bytes"`
	MaxRepeats       wholeNumber `yaml:"max_repeats"`
	MaxBisectCommits wholeNumber `yaml:"max_bisect_commits"`
	MaxBisectRuns    wholeNumber `yaml:"max_bisect_runs"`
}

type rawCompare struct {
	FailSlowerPct realNumber `yaml:"fail_slower_pct"`
}

// wholeNumber refuses `1.5` and `"3"`, which yaml.v3 would silently truncate or convert.
type wholeNumber int64

// UnmarshalYAML takes only an integer scalar.
func (n *wholeNumber) UnmarshalYAML(node *yaml.Node) error {
	var i int64
	if node.Kind != yaml.ScalarNode || node.ShortTag() != "!!int" || node.Decode(&i) != nil {
		return typeError(node, "a whole number")
	}
	*n = wholeNumber(i)
	return nil
}

// strictBool takes only true or false, not `yes`, `1` or `"true"`.
type strictBool bool

// UnmarshalYAML takes only a boolean scalar.
func (b *strictBool) UnmarshalYAML(node *yaml.Node) error {
	var v bool
	if node.Kind != yaml.ScalarNode || node.ShortTag() != "!!bool" || node.Decode(&v) != nil {
		return typeError(node, "true or false")
	}
	*b = strictBool(v)
	return nil
}

// realNumber takes integers and decimals but not text, `.nan` or `.inf`.
type realNumber float64

// UnmarshalYAML takes only a finite integer or decimal scalar.
func (n *realNumber) UnmarshalYAML(node *yaml.Node) error {
	var f float64
	tag := node.ShortTag()
	if node.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || node.Decode(&f) != nil ||
		math.IsNaN(f) || math.IsInf(f, 0) {
		return typeError(node, "a number")
	}
	*n = realNumber(f)
	return nil
}

// typeError is a *yaml.TypeError so that the decoder keeps going and reports it with
// its line, like its own type errors.
func typeError(node *yaml.Node, want string) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want %s, not %s", node.Line, want, describeNode(node))}}
}

func describeNode(node *yaml.Node) string {
	switch node.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "`" + safetext.Clean(node.Value) + "`"
}

func rawDefaults() rawFile {
	d := Default()
	return rawFile{
		// Version has no default: the file must say which schema it is written for.
		Version:       0,
		Epic:          wholeNumber(d.Epic),
		Trigger:       rawTrigger{MinPermission: d.Trigger.MinPermission},
		DefaultModels: nil,
		Sampling:      nil,
		Shape: rawShape{
			Prompt:   wholeNumber(d.Shape.Prompt),
			Generate: wholeNumber(d.Shape.Generate),
			Warmup:   wholeNumber(d.Shape.Warmup),
		},
		Runners: nil,
		Guard: rawGuard{
			IdleSecs:         wholeNumber(d.Guard.IdleWindow / time.Second),
			SampleHz:         wholeNumber(d.Guard.SampleHz),
			MaxAttempts:      wholeNumber(d.Guard.MaxAttempts),
			MaxWaitSecs:      wholeNumber(d.Guard.MaxWait / time.Second),
			MaxForeignCPUPct: realNumber(d.Guard.MaxForeignCPUPct),
			Lock:             d.Guard.Lock,
		},
		Branches: rawBranches{Profile: d.Branches.Profile, Baseline: d.Branches.Baseline, DeleteStale: strictBool(d.Branches.DeleteStale)},
		Results:  rawResults{Profiles: d.Results.Profiles, Reports: d.Results.Reports, Benchmarks: d.Results.Benchmarks},
		Rules:    d.Rules,
		Verify:   nil,
		Limits: rawLimits{
			MaxModels:        wholeNumber(d.Limits.MaxModels),
			RunTimeoutMins:   wholeNumber(d.Limits.RunTimeout / time.Minute),
			CommentMaxBytes:  wholeNumber(d.Limits.CommentMaxBytes),
			MaxRepeats:       wholeNumber(d.Limits.MaxRepeats),
			MaxBisectCommits: wholeNumber(d.Limits.MaxBisectCommits),
			MaxBisectRuns:    wholeNumber(d.Limits.MaxBisectRuns),
		},
		Trend:   rawTrend{Publish: d.Trend.Publish, Path: d.Trend.Path, PagesBranch: d.Trend.PagesBranch},
		Compare: rawCompare{FailSlowerPct: realNumber(d.Compare.FailSlowerPct)},
		Nightly: rawNightly{CreepPct: realNumber(d.Nightly.CreepPct), BisectRuns: wholeNumber(d.Nightly.BisectRuns)},
	}
}

// MaxFileBytes bounds the config file: the full example is 3 KiB.
const MaxFileBytes = 1 << 20

// maxErrors is how many problems an error lists; the rest are counted.
const maxErrors = 20

// Load reads and parses the config file at path; errors name path and the line.
func Load(path string) (Config, error) {
	data, err := infile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return Config{}, fmt.Errorf("reading perfbot config: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes and validates a perfbot.yml; name is used in errors
// (`.github/perfbot.yml:12: models.llama.weights_gib: must be > 0 ...`). Every step is
// linear in the size of the file, which is at most MaxFileBytes.
func Parse(data []byte, name string) (Config, error) {
	if len(data) > MaxFileBytes {
		return Config{}, fmt.Errorf("%s: %s, more than the %s a perfbot config can be", name, infile.Size(int64(len(data))), infile.Size(MaxFileBytes))
	}
	raw := rawDefaults()
	doc, err := yamlstrict.Decode(data, name, &raw)
	if err != nil {
		return Config{}, explain(data, name, err)
	}
	c, fes := build(raw, modelOrder(doc.Root))
	fes = append(fes, c.check()...)
	if len(fes) > 0 {
		errs := make([]error, 0, min(len(fes), maxErrors)+1)
		for _, fe := range fes[:min(len(fes), maxErrors)] {
			errs = append(errs, doc.Errorf(fe.path, "%s", fe.msg))
		}
		if len(fes) > maxErrors {
			errs = append(errs, fmt.Errorf("%s: and %d more problems", name, len(fes)-maxErrors))
		}
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}

// build turns the raw file into a Config. It reports only what the Config cannot hold
// (a duration too large for time.Duration); everything else is left to check.
func build(raw rawFile, order []string) (Config, []fieldError) {
	var fes []fieldError
	dur := func(key string, n wholeNumber, unit time.Duration) time.Duration {
		// A year is far beyond any sensible value and far inside time.Duration's range.
		if limit := wholeNumber(366 * 24 * time.Hour / unit); n > limit || n < -limit {
			fes = append(fes, fieldError{key, fmt.Sprintf("%d is out of range (more than a year)", n)})
			return 0
		}
		return time.Duration(n) * unit
	}

	c := Config{
		Version:       int(raw.Version),
		Epic:          int(raw.Epic),
		Trigger:       Trigger{MinPermission: raw.Trigger.MinPermission},
		DefaultModels: raw.DefaultModels,
		Shape: Shape{
			Prompt:   int(raw.Shape.Prompt),
			Generate: int(raw.Shape.Generate),
			Warmup:   int(raw.Shape.Warmup),
		},
		Runners: raw.Runners,
		Guard: Guard{
			IdleWindow:       dur("guard.idle_secs", raw.Guard.IdleSecs, time.Second),
			SampleHz:         int(raw.Guard.SampleHz),
			MaxAttempts:      int(raw.Guard.MaxAttempts),
			MaxWait:          dur("guard.max_wait_secs", raw.Guard.MaxWaitSecs, time.Second),
			MaxForeignCPUPct: float64(raw.Guard.MaxForeignCPUPct),
			Lock:             raw.Guard.Lock,
		},
		Branches: Branches{Profile: raw.Branches.Profile, Baseline: raw.Branches.Baseline, DeleteStale: bool(raw.Branches.DeleteStale)},
		Results: ResultPaths{
			Profiles:   raw.Results.Profiles,
			Reports:    raw.Results.Reports,
			Benchmarks: raw.Results.Benchmarks,
		},
		Rules:  raw.Rules,
		Verify: raw.Verify,
		Limits: Limits{
			MaxModels:        int(raw.Limits.MaxModels),
			RunTimeout:       dur("limits.run_timeout_mins", raw.Limits.RunTimeoutMins, time.Minute),
			CommentMaxBytes:  int(raw.Limits.CommentMaxBytes),
			MaxRepeats:       int(raw.Limits.MaxRepeats),
			MaxBisectCommits: int(raw.Limits.MaxBisectCommits),
			MaxBisectRuns:    int(raw.Limits.MaxBisectRuns),
		},
		Trend:   Trend{Publish: raw.Trend.Publish, Path: raw.Trend.Path, PagesBranch: raw.Trend.PagesBranch},
		Compare: Compare{FailSlowerPct: float64(raw.Compare.FailSlowerPct)},
		Nightly: Nightly{CreepPct: float64(raw.Nightly.CreepPct), BisectRuns: int(raw.Nightly.BisectRuns)},
	}
	def := Default()
	if c.Runners == nil {
		c.Runners = def.Runners
	}
	if c.Verify == nil {
		c.Verify = def.Verify
	}
	if raw.Sampling == nil {
		raw.Sampling = def.SamplingTags
	}
	for _, name := range order {
		m := raw.Models[name]
		c.Models = append(c.Models, Model{
			Name:       name,
			Dir:        m.Dir,
			ModelType:  m.ModelType,
			ConfigPath: m.Config,
			WeightsGiB: float64(m.WeightsGiB),
		})
	}
	if c.DefaultModels == nil {
		c.DefaultModels = c.modelNames()
	}
	c.Sampling = make([]results.Sampling, len(raw.Sampling))
	c.SamplingTags = make([]string, len(raw.Sampling))
	for i, tag := range raw.Sampling {
		c.SamplingTags[i] = tag
		// A bad tag stays as written, for check to report.
		if s, err := results.ParseSampling(tag); err == nil {
			c.Sampling[i] = s
			c.SamplingTags[i] = s.Tag()
		}
	}
	return c, fes
}

// modelOrder returns the model names in file order (a Go map has none).
func modelOrder(root *yaml.Node) []string {
	m := topMapping(root)
	if m == nil {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "models" && m.Content[i+1].Kind == yaml.MappingNode {
			models := m.Content[i+1]
			names := make([]string, 0, len(models.Content)/2)
			for j := 0; j+1 < len(models.Content); j += 2 {
				names = append(names, models.Content[j].Value)
			}
			return names
		}
	}
	return nil
}

func topMapping(root *yaml.Node) *yaml.Node {
	if root == nil {
		return nil
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil
	}
	return root
}

var (
	errLineRE    = regexp.MustCompile(`^(.*):(\d+): (.*)$`)
	unknownKeyRE = regexp.MustCompile(`^unknown key "(.*)"$`)
	yamlTypeRE   = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
	ownTypeRE    = regexp.MustCompile("^want (.+), not (?:`(.*)`|(a list|a mapping))$")
)

// explain adds the key path to yamlstrict's decode errors, which name only the line
// (a flow mapping holds several keys on one line), and says what was expected.
func explain(data []byte, name string, err error) error {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return err // a syntax error: yamlstrict's message is all there is
	}
	idx := indexNodes(&root)
	lines := strings.Split(err.Error(), "\n")
	if len(lines) > maxErrors {
		// Each line is looked up in the whole index: explain the first few only.
		more := len(lines) - maxErrors
		lines = append(lines[:maxErrors], fmt.Sprintf("%s: and %d more problems", name, more))
	}
	for i, l := range lines {
		m := errLineRE.FindStringSubmatch(l)
		if m == nil || m[1] != name {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		msg := m[3]
		if k := unknownKeyRE.FindStringSubmatch(msg); k != nil {
			if p, ok := idx.find(line, true, yaml.ScalarNode, k[1], false); ok {
				msg = p + ": unknown key; " + knownKeys(p)
				if p == "sandbox" || p == "guard.sandbox" {
					msg = p + ": unknown key; " + sandboxNotHere
				}
			}
		} else if t := yamlTypeRE.FindStringSubmatch(msg); t != nil {
			kind, value, prefix := tagKind(t[1]), t[2], false
			if strings.HasSuffix(value, "...") {
				value, prefix = strings.TrimSuffix(value, "..."), true
			}
			got := "`" + safetext.Clean(t[2]) + "`"
			if kind == yaml.SequenceNode {
				got = "a list"
			} else if kind == yaml.MappingNode {
				got = "a mapping"
			}
			msg = "want " + describeType(t[3]) + ", not " + got
			if p, ok := idx.find(line, false, kind, value, prefix); ok {
				msg = p + ": " + msg
			}
		} else if t := ownTypeRE.FindStringSubmatch(msg); t != nil {
			kind := yaml.ScalarNode
			switch t[3] {
			case "a list":
				kind = yaml.SequenceNode
			case "a mapping":
				kind = yaml.MappingNode
			}
			if p, ok := idx.find(line, false, kind, t[2], false); ok {
				msg = p + ": " + msg
			}
		}
		lines[i] = fmt.Sprintf("%s:%d: %s", name, line, msg)
	}
	return errors.New(strings.Join(lines, "\n"))
}

type nodeEntry struct {
	line  int
	path  string
	isKey bool
	kind  yaml.Kind
	value string
}

type nodeIndex []nodeEntry

func indexNodes(root *yaml.Node) nodeIndex {
	var idx nodeIndex
	var walk func(n *yaml.Node, p string)
	join := func(p, k string) string {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	walk = func(n *yaml.Node, p string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, p)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				kp := join(p, k.Value)
				idx = append(idx, nodeEntry{line: k.Line, path: kp, isKey: true, kind: k.Kind, value: k.Value})
				idx = append(idx, nodeEntry{line: v.Line, path: kp, kind: v.Kind, value: v.Value})
				walk(v, kp)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				ip := join(p, strconv.Itoa(i))
				idx = append(idx, nodeEntry{line: c.Line, path: ip, kind: c.Kind, value: c.Value})
				walk(c, ip)
			}
		}
	}
	walk(root, "")
	return idx
}

// find returns the path of the first key or value on line of that kind and value
// (value ignored for lists and mappings; a prefix match when prefix is set).
func (idx nodeIndex) find(line int, isKey bool, kind yaml.Kind, value string, prefix bool) (string, bool) {
	for _, e := range idx {
		if e.line != line || e.isKey != isKey || e.kind != kind {
			continue
		}
		if kind == yaml.ScalarNode && !(e.value == value || prefix && strings.HasPrefix(e.value, value)) {
			continue
		}
		return e.path, true
	}
	return "", false
}

func tagKind(tag string) yaml.Kind {
	switch tag {
	case "seq":
		return yaml.SequenceNode
	case "map":
		return yaml.MappingNode
	}
	return yaml.ScalarNode
}

func describeType(goType string) string {
	switch {
	case goType == "string":
		return "text"
	case goType == "[][]string":
		return "a list of commands (each an argv list)"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map[") || strings.Contains(goType, "."):
		return "a mapping"
	}
	return goType
}

// sandboxNotHere answers a sandbox setting in the file: the runner reads the file
// from the commit it measures, which a pull request edits.
const sandboxNotHere = "the sandbox is the runner host's setting (PERFBOT_SANDBOX in perfbot's environment, docs/runner.md), not the repository's: a pull request could turn it off here"

// knownKeys lists the keys allowed beside the unknown key at path.
func knownKeys(path string) string {
	parts := strings.Split(path, ".")
	parent := parts[:len(parts)-1]
	t := reflect.TypeOf(rawFile{})
	for _, part := range parent {
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return "check its spelling"
			}
			t = f.Type
		case reflect.Map, reflect.Slice:
			t = t.Elem()
		default:
			return "check its spelling"
		}
	}
	if t.Kind() != reflect.Struct {
		return "check its spelling"
	}
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		keys = append(keys, strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0])
	}
	where := "the top-level keys"
	if len(parent) > 0 {
		where = "the keys of " + strings.Join(parent, ".")
	}
	return where + " are " + strings.Join(keys, ", ")
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0] == tag {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}
