// Package yamlstrict decodes YAML files that people edit (the perfbot config, the
// attribution rules) strictly: an unknown key or a value of the wrong type is an error
// that names the file, the line and the key. It knows nothing of what the files mean.
package yamlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lablup/perfbot/internal/safetext"
)

// Doc is a decoded document, kept to point later validation errors at their lines.
type Doc struct {
	Name string
	Root *yaml.Node
}

var (
	unknownRE = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)
	lineRE    = regexp.MustCompile(`^line (\d+): (.*)$`)
	yamlErrRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// MaxMappingKeys bounds the keys of one mapping. yaml.v3 looks for duplicate keys by
// comparing each key with every earlier one, so a mapping of 15,000 keys costs seconds
// and a larger one minutes; no file perfbot reads needs a thousand.
const MaxMappingKeys = 1000

// Decode decodes data into out, rejecting unknown keys, several documents, type
// mismatches and mappings of more than MaxMappingKeys keys. Errors read
// `name:LINE: message`.
func Decode(data []byte, name string, out any) (*Doc, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, rewrite(name, err)
	}
	if n := widestMapping(&root); n != nil {
		return nil, fmt.Errorf("%s:%d: a mapping of %d keys, more than the %d this file can have", name, n.Line, len(n.Content)/2, MaxMappingKeys)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return &Doc{Name: name, Root: &root}, fmt.Errorf("%s: the file is empty", name)
		}
		return nil, rewrite(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s:%d: a second YAML document; put everything in one", name, extra.Line)
	}
	return &Doc{Name: name, Root: &root}, nil
}

// widestMapping returns the first mapping with more than MaxMappingKeys keys, or nil.
// Aliases are not followed: yaml.v3 itself bounds their expansion.
func widestMapping(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.MappingNode && len(n.Content)/2 > MaxMappingKeys {
		return n
	}
	for _, c := range n.Content {
		if w := widestMapping(c); w != nil {
			return w
		}
	}
	return nil
}

func rewrite(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			if m := unknownRE.FindStringSubmatch(e); m != nil {
				msgs = append(msgs, fmt.Sprintf("%s:%s: unknown key %s", name, m[1], safetext.Quote(m[2])))
			} else if m := lineRE.FindStringSubmatch(e); m != nil {
				msgs = append(msgs, fmt.Sprintf("%s:%s: %s", name, m[1], m[2]))
			} else {
				msgs = append(msgs, name+": "+e)
			}
		}
		return errors.New(strings.Join(msgs, "\n"))
	}
	if m := yamlErrRE.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", name, m[1], m[2])
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Line returns the line of the value at a dotted path (`models.llama.weights_gib`,
// `units.0.roles`), or of the deepest parent found, or 0.
func (d *Doc) Line(path string) int {
	if d == nil || d.Root == nil {
		return 0
	}
	n := d.Root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	if path == "" {
		return line
	}
	for _, part := range strings.Split(path, ".") {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					line = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// Errorf makes a validation error for the value at path: `name:LINE: path: message`.
func (d *Doc) Errorf(path, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	name := ""
	if d != nil {
		name = d.Name
	}
	// A key path holds the file's own keys: printed safe.
	shown := safetext.Clean(path)
	if l := d.Line(path); l > 0 {
		return fmt.Errorf("%s:%d: %s: %s", name, l, shown, msg)
	}
	return fmt.Errorf("%s: %s: %s", name, shown, msg)
}
