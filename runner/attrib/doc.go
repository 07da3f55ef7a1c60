// Package attrib owns the attribution rules of docs/analysis.md §4-§7: kernel classes, the
// roles that tie generic kernels to model ops, the port units with their reach, and
// the ranking overrides. The rules are data in a YAML file the target repo owns (the
// shipped default is embedded); this package parses them strictly and applies them to
// the ordered decode dispatches of one run.
//
// It works on plain arrays handed in by the analyzer: it must not read traces, logs or
// summaries, run processes, or know any model family or port by name in Go code.
package attrib
