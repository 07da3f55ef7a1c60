package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// schemaKeys walks the file's Go types the way the parser reads them: every yaml key,
// in the file's order, a struct's keys right after it, a mapping of structs as
// <name>.
func schemaKeys() []string {
	var keys []string
	var walk func(rt reflect.Type, prefix string)
	walk = func(rt reflect.Type, prefix string) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			k := prefix + f.Tag.Get("yaml")
			keys = append(keys, k)
			ft := f.Type
			if ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct {
				walk(ft.Elem(), k+".<name>.")
			} else if ft.Kind() == reflect.Struct {
				walk(ft, k+".")
			}
		}
	}
	walk(reflect.TypeOf(rawFile{}), "")
	return keys
}

// Keys is the schema: a key the parser reads and Keys lacks would be missing from the
// generated references, and a key Keys has that the parser does not read would be
// documented but refused.
func TestKeysAreTheSchema(t *testing.T) {
	t.Parallel()
	want := schemaKeys()
	if len(want) < 30 {
		t.Fatalf("the walk found only %d keys; it is broken", len(want))
	}
	got := make([]string, len(Keys))
	for i, k := range Keys {
		got[i] = k.Path
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("config.Keys (config/keys.go) is not the schema the parser reads, in its order (-schema +Keys):\n%s", d)
	}
	for _, k := range Keys {
		switch {
		case (k.Default == "") == (k.Note == ""):
			t.Errorf("%s: give the default as a value (Default) or in words (Note), one of the two", k.Path)
		case strings.TrimSpace(k.Meaning) == "" || strings.ContainsAny(k.Meaning+k.Note+k.Default, "\n|"):
			t.Errorf("%s: the meaning must be one line of Markdown without pipes: %q", k.Path, k.Meaning)
		}
	}
}

// Every default written as a value is the parser's: a file that spells it out parses
// to the same Config as a file that leaves the key out.
func TestKeyDefaultsAreTheParsers(t *testing.T) {
	t.Parallel()
	n := 0
	for _, k := range Keys {
		if k.Default == "" {
			continue
		}
		n++
		if err := checkDefault(k); err != nil {
			t.Error(err)
		}
	}
	if n < 20 {
		t.Errorf("only %d keys have a default value to check", n)
	}
}

// The check above fails on a wrong default, of a number, a list and a mapping.
func TestCheckDefaultCatchesAWrongDefault(t *testing.T) {
	t.Parallel()
	for _, k := range []Key{
		{Path: "guard.idle_secs", Default: "91"},
		{Path: "limits.run_timeout_mins", Default: "4"},
		{Path: "sampling", Default: "[t0.7]"},
		{Path: "runners", Default: "{rocm: [self-hosted, gfx1151]}"},
		{Path: "rules", Default: "rules.yml"},
		{Path: "guard.no_such_key", Default: "1"},
		{Path: "models.<name>.dir", Default: "x"},
	} {
		if err := checkDefault(k); err == nil {
			t.Errorf("checkDefault(%s: %s) passed, want an error", k.Path, k.Default)
		}
	}
}

// checkDefault parses the smallest file with and without the key set to its default.
func checkDefault(k Key) error {
	if strings.Contains(k.Path, "<name>") {
		return fmt.Errorf("%s: a default under a mapping's <name> cannot be checked; say it in Note", k.Path)
	}
	var b strings.Builder
	for i, part := range strings.Split(k.Path, ".") {
		fmt.Fprintf(&b, "\n%s%s:", strings.Repeat("  ", i), part)
	}
	file := base + strings.TrimPrefix(b.String(), "\n") + " " + k.Default + "\n"
	want, err := Parse([]byte(base), name)
	if err != nil {
		return fmt.Errorf("parsing the smallest file: %w", err)
	}
	got, err := Parse([]byte(file), name)
	if err != nil {
		return fmt.Errorf("%s: the documented default %s does not parse: %w", k.Path, k.Default, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		return fmt.Errorf("%s: the documented default %s is not the parser's (-left out +given):\n%s", k.Path, k.Default, d)
	}
	return nil
}
