package templates

import "embed"

// FS holds every document template, one `<kind>.md.tmpl` per document.
//
//go:embed *.md.tmpl
var FS embed.FS
