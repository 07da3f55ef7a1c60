package report

import "github.com/lablup/perfbot/internal/mdtext"

// The escaping lives in internal/mdtext so that runner-side Markdown (the ranking
// table) uses the same rules; these names keep the templates' function map short.
var (
	Text     = mdtext.Text
	Code     = mdtext.Code
	CellCode = mdtext.CellCode
	Fenced   = mdtext.Fenced
	LinkURL  = mdtext.LinkURL
)
